package dev.dht.replication;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A replica with no sockets: the newest record per id in a map (last write wins), a read rank set by the test,
 * a count of the reads it was asked, and switches that make its reads never answer or fail and its writes fail
 * or land late. Its range lists the map in unsigned UTF-8 key order, tombstones included, as a store does.
 */
final class InMemoryReplica implements Replica {
    /** What a read does. */
    enum Reads { ANSWER, NEVER_ANSWER, FAIL }

    private final Map<String, Record> records = new ConcurrentHashMap<>();
    private final AtomicInteger readsAsked = new AtomicInteger();
    private final int rank;
    private volatile Reads reads = Reads.ANSWER;
    private volatile boolean writesFail;
    private volatile Duration writeDelay = Duration.ZERO;

    InMemoryReplica(int rank) {
        this.rank = rank;
    }

    void reads(Reads behaviour) {
        this.reads = behaviour;
    }

    /** Makes every later write fail (true) or apply (false). */
    void writesFail(boolean fail) {
        this.writesFail = fail;
    }

    /** Makes every later write apply (and answer) only {@code delay} after it was subscribed. */
    void writesDelayed(Duration delay) {
        this.writeDelay = delay;
    }

    /** Reads that were subscribed, whatever they did. */
    int readsAsked() {
        return readsAsked.get();
    }

    @Override
    public Mono<Optional<Record>> read(String id) {
        return Mono.defer(() -> {
            readsAsked.incrementAndGet();
            return switch (reads) {
                case ANSWER -> Mono.just(Optional.ofNullable(records.get(id)));
                case NEVER_ANSWER -> Mono.never();
                case FAIL -> Mono.error(new IllegalStateException("replica down"));
            };
        });
    }

    @Override
    public Mono<Boolean> write(String id, Record record) {
        if (writesFail) {
            return Mono.error(new IllegalStateException("replica down"));
        }
        Mono<Boolean> write = Mono.fromSupplier(() -> records.merge(id, record, Record::newest) == record);
        return writeDelay.isZero() ? write : write.delaySubscription(writeDelay);
    }

    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        byte[] from = start.getBytes(StandardCharsets.UTF_8);
        byte[] to = end == null ? null : end.getBytes(StandardCharsets.UTF_8);
        return Flux.defer(() -> Flux.fromStream(records.entrySet().stream()
                .map(entry -> new KeyedRecord(entry.getKey().getBytes(StandardCharsets.UTF_8), entry.getValue()))
                .filter(entry -> Arrays.compareUnsigned(entry.key(), from) >= 0
                        && (to == null || Arrays.compareUnsigned(entry.key(), to) < 0))
                .sorted((a, b) -> Arrays.compareUnsigned(a.key(), b.key()))));
    }

    @Override
    public int readRank() {
        return rank;
    }
}
