package dev.dht.peer;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Wire format of {@code GET /internal/range} and of write batches ({@code POST /internal/records}): a sequence of frames, then an end marker.
 * <pre>
 * frame:      int32 keyLength (big-endian, &gt;= 0) | key bytes | int32 recordLength | record bytes (Record layout)
 * end marker: int32 -1
 * </pre>
 * The end marker lets the coordinator tell a complete stream from one cut short (a peer that died mid-stream):
 * a body that ends without it fails with {@link IllegalStateException}.
 */
public final class RangeFrameCodec {
    private static final int END_OF_STREAM = -1;
    /** Largest frame accepted (a broken peer must not make the decoder allocate without bound). */
    private static final long MAX_FRAME_BYTES = Integer.MAX_VALUE - 64;

    private RangeFrameCodec() {
    }

    /** Size in bytes of {@code entry}'s frame: both lengths, the key and the encoded record. */
    public static int frameBytes(KeyedRecord entry) {
        return 8 + entry.key().length + entry.record().encodedSize();
    }

    /** One frame for {@code entry}. */
    public static DataBuffer encode(KeyedRecord entry, DataBufferFactory buffers) {
        return buffers.wrap(putFrame(ByteBuffer.allocate(frameBytes(entry)), entry).flip());
    }

    /** The end marker. */
    public static DataBuffer endOfStream(DataBufferFactory buffers) {
        return buffers.wrap(ByteBuffer.allocate(4).putInt(END_OF_STREAM).flip());
    }

    /** A whole write batch ({@code POST /internal/records}) in one array: each entry's frame, then the end marker. */
    public static byte[] encodeBatch(List<KeyedRecord> entries) {
        int size = 4;
        for (KeyedRecord entry : entries) {
            size += frameBytes(entry);
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        for (KeyedRecord entry : entries) {
            putFrame(buffer, entry);
        }
        return buffer.putInt(END_OF_STREAM).array();
    }

    /** Writes {@code entry}'s frame (the layout in the class comment) at {@code buffer}'s position. */
    private static ByteBuffer putFrame(ByteBuffer buffer, KeyedRecord entry) {
        buffer.putInt(entry.key().length).put(entry.key());
        return entry.record().encodeInto(buffer.putInt(entry.record().encodedSize()));
    }

    /** Frames for a whole stream: each entry, then the end marker. */
    public static Flux<DataBuffer> encode(Flux<KeyedRecord> entries, DataBufferFactory buffers) {
        return entries.map(entry -> encode(entry, buffers)).concatWith(Mono.fromSupplier(() -> endOfStream(buffers)));
    }

    /**
     * Decodes a body split into arbitrary buffers (each is released, also the ones read ahead when the stream is
     * cancelled or fails). Holds at most one incomplete frame and {@code prefetch} buffers. Fails if the body
     * ends without the end marker or has bytes after it.
     *
     * @param source names the peer in error messages
     */
    public static Flux<KeyedRecord> decode(Flux<DataBuffer> body, String source, int prefetch) {
        return Flux.defer(() -> {
            FrameReader reader = new FrameReader(source);
            return body.concatMapIterable(reader::feed, prefetch)
                    .doOnDiscard(DataBuffer.class, DataBufferUtils::release)
                    .concatWith(Mono.fromRunnable(reader::finish));
        });
    }

    /**
     * Decodes a whole body already in one array, such as a write batch, reading the frames where they are
     * (no copy of the body). Same checks as {@link #decode(Flux, String, int)}.
     *
     * @param source names the sender in error messages
     * @throws IllegalStateException if the body is cut short, has bytes after its end marker or a bad length
     * @throws IllegalArgumentException if a record in it is malformed
     */
    public static List<KeyedRecord> decodeAll(byte[] body, String source) {
        FrameReader reader = new FrameReader(source, body);
        List<KeyedRecord> frames = reader.frames();
        reader.finish();
        return frames;
    }

    /** Reassembles frames from buffers; not thread-safe (used by one serial stream). */
    private static final class FrameReader {
        private final String source;
        private byte[] pending = new byte[0];   // grown to what the first buffer needs, then doubled
        private int length;
        private boolean ended;

        FrameReader(String source) {
            this.source = source;
        }

        /** A reader whose pending bytes are {@code bytes} itself (not copied; the caller no longer writes it). */
        FrameReader(String source, byte[] bytes) {
            this.source = source;
            this.pending = bytes;
            this.length = bytes.length;
        }

        List<KeyedRecord> feed(DataBuffer buffer) {
            try {
                int incoming = buffer.readableByteCount();
                if (length + incoming > pending.length) {
                    pending = Arrays.copyOf(pending, Math.max(pending.length * 2, length + incoming));
                }
                buffer.read(pending, length, incoming);
                length += incoming;
            } finally {
                DataBufferUtils.release(buffer);
            }
            return frames();
        }

        /** The complete frames among the pending bytes; keeps the bytes of an incomplete one. */
        List<KeyedRecord> frames() {
            List<KeyedRecord> frames = new ArrayList<>();
            int offset = 0;
            while (true) {
                if (ended) {
                    if (offset < length) {
                        throw new IllegalStateException("range stream from " + source + " has bytes after its end marker");
                    }
                    break;
                }
                if (length - offset < 4) {
                    break;
                }
                int keyLength = readInt(offset);
                if (keyLength == END_OF_STREAM) {
                    ended = true;
                    offset += 4;
                    continue;
                }
                checkLength(keyLength);
                if (length - offset < 8L + keyLength) {
                    break;
                }
                int recordLength = readInt(offset + 4 + keyLength);
                checkLength(recordLength);
                long frameBytes = 8L + keyLength + recordLength;
                if (frameBytes > MAX_FRAME_BYTES) {
                    throw new IllegalStateException("range stream from " + source + " announces a frame of "
                            + frameBytes + " bytes, more than " + MAX_FRAME_BYTES);
                }
                int frameLength = (int) frameBytes;
                if (length - offset < frameLength) {
                    break;
                }
                byte[] key = Arrays.copyOfRange(pending, offset + 4, offset + 4 + keyLength);
                Record record = Record.decode(pending, offset + 8 + keyLength, recordLength);
                frames.add(new KeyedRecord(key, record));
                offset += frameLength;
            }
            if (offset > 0) {
                System.arraycopy(pending, offset, pending, 0, length - offset);
                length -= offset;
            }
            return frames;
        }

        void finish() {
            if (!ended) {
                throw new IllegalStateException("range stream from " + source + " ended without its end marker ("
                        + length + " bytes of an incomplete frame)");
            }
        }

        private void checkLength(int value) {
            if (value < 0) {
                throw new IllegalStateException("range stream from " + source + " has a negative frame length " + value);
            }
        }

        private int readInt(int at) {
            return (pending[at] & 0xff) << 24 | (pending[at + 1] & 0xff) << 16 | (pending[at + 2] & 0xff) << 8 | (pending[at + 3] & 0xff);
        }
    }
}
