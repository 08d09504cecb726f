package dev.dht.peer;

import dev.dht.storage.Record;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.springframework.core.ResolvableType;
import org.springframework.core.codec.ByteArrayDecoder;
import org.springframework.core.io.buffer.DataBuffer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Wire format of batch reads ({@code POST /internal/records/read}, see {@link InternalProtocol}).
 * <pre>
 * request:  per key: int32 keyLength (big-endian, &gt;= 0) | key bytes;  then int32 -1
 * response: per key, in the request's order: int32 recordLength | record bytes (Record layout),
 *           or int32 -1 (the replica has no record for it),
 *           or int32 -2 (not read: the answer would have passed {@link InternalProtocol#BATCH_MAX_BYTES}; read it alone)
 * </pre>
 * The response holds no keys: the caller knows them, in order. Not a stream: both bodies are whole arrays, at
 * most {@link InternalProtocol#BATCH_MAX_BYTES} of records. Stateless, thread-safe.
 */
public final class ReadBatchCodec {
    private static final int END = -1;
    private static final int ABSENT = -1;
    private static final int NOT_READ = -2;
    /** Largest answer to a read batch: its records and one length per key. */
    private static final int MAX_ANSWER_BYTES = InternalProtocol.BATCH_MAX_BYTES + 4 * InternalProtocol.READ_BATCH_MAX_KEYS;
    private static final ResolvableType BYTE_ARRAY = ResolvableType.forClass(byte[].class);
    /** Joins an answer's buffers into one array and releases them; past {@link #MAX_ANSWER_BYTES}, fails. */
    private static final ByteArrayDecoder ANSWER_BYTES = new ByteArrayDecoder();

    static {
        ANSWER_BYTES.setMaxInMemorySize(MAX_ANSWER_BYTES);
    }

    private ReadBatchCodec() {
    }

    /** Bytes {@code key} takes in a request body. */
    public static int frameBytes(byte[] key) {
        return 4 + key.length;
    }

    /** A request body carrying {@code keys}. */
    public static byte[] encodeKeys(List<byte[]> keys) {
        int size = 4;
        for (byte[] key : keys) {
            size += frameBytes(key);
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (byte[] key : keys) {
            buffer.putInt(key.length).put(key);
        }
        return buffer.putInt(END).array();
    }

    /**
     * The keys of a request body.
     *
     * @param maxKeys most keys accepted
     * @throws IllegalArgumentException if the body is cut short, has bytes after its end marker, a negative
     *                                  length, no key or more than {@code maxKeys}
     */
    public static List<byte[]> decodeKeys(byte[] body, int maxKeys) {
        ByteBuffer buffer = ByteBuffer.wrap(body);
        List<byte[]> keys = new ArrayList<>();
        try {
            for (int length = buffer.getInt(); length != END; length = buffer.getInt()) {
                if (length < 0 || length > buffer.remaining()) {
                    throw new IllegalArgumentException("key length " + length + " with " + buffer.remaining() + " bytes left");
                }
                if (keys.size() == maxKeys) {
                    throw new IllegalArgumentException("more than " + maxKeys + " keys");
                }
                byte[] key = new byte[length];
                buffer.get(key);
                keys.add(key);
            }
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("body ends without its end marker");
        }
        if (buffer.hasRemaining()) {
            throw new IllegalArgumentException(buffer.remaining() + " bytes after the end marker");
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("no key");
        }
        return keys;
    }

    /**
     * A response body for {@code keys} keys whose first {@code read.size()} were read (empty Optional: no
     * record); the rest are marked not read.
     */
    public static byte[] encodeAnswers(List<Optional<Record>> read, int keys) {
        int size = 4 * keys;
        for (Optional<Record> record : read) {
            size += record.map(Record::encodedSize).orElse(0);
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (Optional<Record> record : read) {
            if (record.isPresent()) {
                record.get().encodeInto(buffer.putInt(record.get().encodedSize()));
            } else {
                buffer.putInt(ABSENT);
            }
        }
        for (int i = read.size(); i < keys; i++) {
            buffer.putInt(NOT_READ);
        }
        return buffer.array();
    }

    /**
     * {@link #decodeAnswers(byte[], int, String)} of a response body as it arrives (its buffers are released);
     * fails with {@link org.springframework.core.io.buffer.DataBufferLimitException} past the largest answer a
     * replica sends. Non-blocking.
     */
    public static Mono<List<Optional<Record>>> decodeAnswers(Flux<DataBuffer> body, int keys, String source) {
        return ANSWER_BYTES.decodeToMono(body, BYTE_ARRAY, null, null)
                .defaultIfEmpty(new byte[0])
                .map(bytes -> decodeAnswers(bytes, keys, source));
    }

    /**
     * The answers of a response body to {@code keys} keys, in order: the record, empty Optional if the replica
     * has none, or null if it did not read the key (to be read alone).
     *
     * @param source names the peer in errors
     * @throws IllegalStateException if the body holds more or fewer answers, or a bad length
     * @throws IllegalArgumentException if a record in it is malformed
     */
    public static List<Optional<Record>> decodeAnswers(byte[] body, int keys, String source) {
        List<Optional<Record>> answers = new ArrayList<>(keys);
        int offset = 0;
        for (int i = 0; i < keys; i++) {
            if (body.length - offset < 4) {
                throw new IllegalStateException(source + " answered " + i + " of " + keys + " keys of a batch read");
            }
            int length = ByteBuffer.wrap(body, offset, 4).getInt();
            offset += 4;
            if (length == ABSENT) {
                answers.add(Optional.empty());
            } else if (length == NOT_READ) {
                answers.add(null);
            } else if (length < 0 || length > body.length - offset) {
                throw new IllegalStateException(source + " sent a record length of " + length + " in a batch read");
            } else {
                answers.add(Optional.of(Record.decode(body, offset, length)));
                offset += length;
            }
        }
        if (offset != body.length) {
            throw new IllegalStateException(source + " sent " + (body.length - offset) + " bytes after a batch read's answers");
        }
        return answers;
    }
}
