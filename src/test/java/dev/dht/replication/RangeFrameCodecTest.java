package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import reactor.core.publisher.Flux;

/** The internal range wire format: any split of the bytes decodes to the same records; a cut stream fails. */
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
    void bytesAfterTheEndMarkerAreRejected() {
        byte[] bytes = encoded(List.of());
        byte[] extra = Arrays.copyOf(bytes, bytes.length + 3);
        assertThatThrownBy(() -> RangeFrameCodec.decode(split(extra, new Random(), 100), "p", 4).blockLast())
                .hasMessageContaining("after its end marker");
    }
}
