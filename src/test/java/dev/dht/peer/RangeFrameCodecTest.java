package dev.dht.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.core.io.buffer.NettyDataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.publisher.TestPublisher;

/**
 * The internal range and batch wire format: any split of the bytes decodes to the same records, as does a whole
 * batch decoded in place; a cut stream or batch fails.
 */
class RangeFrameCodecTest {
    private static final DefaultDataBufferFactory BUFFERS = DefaultDataBufferFactory.sharedInstance;

    private static List<KeyedRecord> sampleRecords() {
        Random random = new Random(7);
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = new byte[random.nextInt(3) == 0 ? 0 : random.nextInt(5000)];
            random.nextBytes(value);
            Record record = i % 7 == 0 ? Record.tombstone(1000 + i) : Record.value(1000 + i, value);
            records.add(new KeyedRecord(key, record));
        }
        return records;
    }

    private static byte[] encoded(List<KeyedRecord> records) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RangeFrameCodec.encode(Flux.fromIterable(records), BUFFERS).toIterable().forEach(buffer -> {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            DataBufferUtils.release(buffer);
            out.writeBytes(bytes);
        });
        return out.toByteArray();
    }

    private static Flux<DataBuffer> split(byte[] bytes, Random random, int maxPiece) {
        List<DataBuffer> pieces = new ArrayList<>();
        for (int offset = 0; offset < bytes.length; ) {
            int size = Math.min(bytes.length - offset, 1 + random.nextInt(maxPiece));
            pieces.add(BUFFERS.wrap(Arrays.copyOfRange(bytes, offset, offset + size)));
            offset += size;
        }
        return Flux.fromIterable(pieces);
    }

    @Test
    void recordsSurviveAnySplitOfTheBytes() {
        List<KeyedRecord> records = sampleRecords();
        byte[] bytes = encoded(records);
        Random random = new Random(1);
        for (int maxPiece : new int[] {1, 3, 100, 8192, bytes.length}) {
            List<KeyedRecord> decoded = RangeFrameCodec.decode(split(bytes, random, maxPiece), "test", 4).collectList().block();
            assertThat(decoded).hasSize(records.size());
            for (int i = 0; i < records.size(); i++) {
                assertThat(decoded.get(i).key()).isEqualTo(records.get(i).key());
                assertThat(decoded.get(i).record()).isEqualTo(records.get(i).record());
            }
        }
    }

    @Test
    void anEmptyRangeIsJustTheEndMarker() {
        byte[] bytes = encoded(List.of());
        assertThat(bytes).hasSize(4);
        assertThat(RangeFrameCodec.decode(split(bytes, new Random(), 2), "test", 4).collectList().block()).isEmpty();
    }

    @Test
    void aStreamCutShortFailsInsteadOfEndingCleanly() {
        byte[] bytes = encoded(sampleRecords());
        for (int cut : new int[] {0, 2, 4, 100, bytes.length - 4, bytes.length - 1}) {
            byte[] truncated = Arrays.copyOf(bytes, cut);
            assertThatThrownBy(() -> RangeFrameCodec.decode(split(truncated, new Random(3), 50), "peer-a", 4).blockLast())
                    .as("cut at %d of %d bytes", cut, bytes.length)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("peer-a");
        }
    }

    @Test
    void aLargeRecordInSmallBuffersIsDecodedInLinearTime() {
        byte[] value = new byte[8 * 1024 * 1024];
        new Random(11).nextBytes(value);
        List<KeyedRecord> records = List.of(new KeyedRecord("big".getBytes(StandardCharsets.UTF_8), Record.value(1, value)));
        byte[] bytes = encoded(records);
        List<DataBuffer> pieces = new ArrayList<>();
        for (int offset = 0; offset < bytes.length; offset += 256) {
            pieces.add(BUFFERS.wrap(Arrays.copyOfRange(bytes, offset, Math.min(bytes.length, offset + 256))));
        }
        long started = System.nanoTime();
        List<KeyedRecord> decoded = RangeFrameCodec.decode(Flux.fromIterable(pieces), "test", 4).collectList().block();
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertThat(decoded).hasSize(1);
        assertThat(decoded.get(0).record().value()).isEqualTo(value);
        assertThat(millis).as("ms to decode 8 MiB from 256-byte buffers (the bytes held must not be copied per buffer)")
                .isLessThan(1_000);
    }

    @Test
    void buffersReadAheadAreReleasedWhenTheStreamIsCancelled() {
        List<NettyDataBuffer> network = networkBuffers(encoded(sampleRecords()));
        OneRecordClient client = decodeForOneRecordClient(network);
        client.cancel();
        assertThat(network).as("buffers still held (a leak of the connection's pooled memory)")
                .filteredOn(buffer -> buffer.getNativeBuffer().refCnt() > 0).isEmpty();
    }

    @Test
    void buffersReadAheadAreReleasedWhenTheStreamFails() {
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            records.add(new KeyedRecord(("key-" + i).getBytes(StandardCharsets.UTF_8), Record.value(1 + i, new byte[100])));
        }
        byte[] bytes = encoded(records);
        // frames of keys 0-9 take 8 + 5 + 109 bytes each; the 11th record's flags (2nd buffer): a tombstone with a value
        bytes[10 * 122 + 4 + "key-10".length() + 4 + 8] = 1;
        List<NettyDataBuffer> network = networkBuffers(bytes);
        OneRecordClient client = decodeForOneRecordClient(network);
        client.request(Long.MAX_VALUE);
        assertThat(client.error).hasMessageContaining("tombstone carries 100 value bytes");
        assertThat(network).as("buffers still held (a leak of the connection's pooled memory)")
                .filteredOn(buffer -> buffer.getNativeBuffer().refCnt() > 0).isEmpty();
    }

    /** The first 4 KiB of {@code bytes} in reference-counted 1 KiB buffers, as Reactor Netty hands a body over. */
    private static List<NettyDataBuffer> networkBuffers(byte[] bytes) {
        NettyDataBufferFactory factory = new NettyDataBufferFactory(UnpooledByteBufAllocator.DEFAULT);
        List<NettyDataBuffer> buffers = new ArrayList<>();
        for (int offset = 0; offset < 4 * 1024; offset += 1024) {
            buffers.add(factory.wrap(Unpooled.copiedBuffer(bytes, offset, 1024)));
        }
        return buffers;
    }

    /**
     * Decodes {@code network} (4 buffers: the decoder's read-ahead) for a client that asked for one record. The
     * buffers arrive while the client wants no more, so all but the first wait in the decoder.
     */
    private static OneRecordClient decodeForOneRecordClient(List<NettyDataBuffer> network) {
        TestPublisher<DataBuffer> body = TestPublisher.create();
        OneRecordClient client = new OneRecordClient();
        RangeFrameCodec.decode(body.flux(), "test", 4).subscribe(client);
        network.forEach(body::next);
        assertThat(client.received).isEqualTo(1);
        return client;
    }

    /** Asks for one record at first. */
    private static final class OneRecordClient extends BaseSubscriber<KeyedRecord> {
        int received;
        Throwable error;

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            request(1);
        }

        @Override
        protected void hookOnNext(KeyedRecord record) {
            received++;
        }

        @Override
        protected void hookOnError(Throwable failure) {
            error = failure;
        }
    }

    @Test
    void anAbsurdFrameLengthIsRejectedInsteadOfOverflowing() {
        byte[] hugeKey = new byte[16];
        java.nio.ByteBuffer.wrap(hugeKey).putInt(0x7fff_fffc);
        assertThatThrownBy(() -> RangeFrameCodec.decode(split(hugeKey, new Random(), 100), "peer-b", 4).blockLast())
                .as("8 + keyLength must not overflow into a negative index")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("peer-b");
        byte[] hugeRecord = new byte[16];
        java.nio.ByteBuffer.wrap(hugeRecord).putInt(0).putInt(0x7fff_fff0);
        assertThatThrownBy(() -> RangeFrameCodec.decode(split(hugeRecord, new Random(), 100), "peer-c", 4).blockLast())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("announces a frame of");
    }

    @Test
    void bytesAfterTheEndMarkerAreRejected() {
        byte[] bytes = encoded(List.of());
        byte[] extra = Arrays.copyOf(bytes, bytes.length + 3);
        assertThatThrownBy(() -> RangeFrameCodec.decode(split(extra, new Random(), 100), "p", 4).blockLast())
                .hasMessageContaining("after its end marker");
    }

    @Test
    void aWholeBatchDecodesInPlaceToTheRecordsItWasEncodedFrom() {
        List<KeyedRecord> records = sampleRecords();
        byte[] batch = RangeFrameCodec.encodeBatch(records);

        List<KeyedRecord> decoded = RangeFrameCodec.decodeAll(batch.clone(), "a batch");

        assertThat(batch).isEqualTo(encoded(records));
        assertThat(decoded).hasSize(records.size());
        for (int i = 0; i < records.size(); i++) {
            assertThat(decoded.get(i).key()).isEqualTo(records.get(i).key());
            assertThat(decoded.get(i).record()).isEqualTo(records.get(i).record());
        }
        assertThat(RangeFrameCodec.decodeAll(RangeFrameCodec.encodeBatch(List.of()), "a batch")).isEmpty();
    }

    @Test
    void aMalformedWholeBatchIsRejected() {
        byte[] batch = RangeFrameCodec.encodeBatch(sampleRecords().subList(0, 3));
        byte[] cut = Arrays.copyOf(batch, batch.length - 5);
        byte[] extra = Arrays.copyOf(batch, batch.length + 1);
        byte[] badRecord = java.nio.ByteBuffer.allocate(4 + 1 + 4 + 3 + 4).putInt(1).put((byte) 'k').putInt(3)
                .put(new byte[3]).putInt(-1).array();

        assertThatThrownBy(() -> RangeFrameCodec.decodeAll(cut, "a batch"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without its end marker");
        assertThatThrownBy(() -> RangeFrameCodec.decodeAll(extra, "a batch"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("after its end marker");
        assertThatThrownBy(() -> RangeFrameCodec.decodeAll(badRecord, "a batch"))
                .as("a record shorter than its header").isInstanceOf(IllegalArgumentException.class);
    }
}
