package dev.dht.storage;

import dev.dht.metrics.StorageMetrics;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.io.IOException;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reactive face of this node's {@link RecordRepository}: every call runs on the {@link StorageScheduler},
 * so it is safe to call from a Netty event loop. A full storage queue fails the call with
 * {@link java.util.concurrent.RejectedExecutionException} (answered 503).
 */
public final class LocalStore implements AutoCloseable {
    private final RecordRepository repository;
    private final StorageScheduler storage;
    private final HybridLogicalClock clock;
    private final StorageMetrics metrics;

    /** A store whose operations are timed into {@code metrics}. */
    public LocalStore(RecordRepository repository, StorageScheduler storage, HybridLogicalClock clock,
                      StorageMetrics metrics) {
        this.repository = repository;
        this.storage = storage;
        this.clock = clock;
        this.metrics = metrics;
    }

    /** A store without metrics (meters go to an empty registry). */
    public LocalStore(RecordRepository repository, StorageScheduler storage, HybridLogicalClock clock) {
        this(repository, storage, clock, new StorageMetrics(new CompositeMeterRegistry()));
    }

    /** The stored record, tombstones included; empty Optional if the key was never written. */
    public Mono<Optional<Record>> read(byte[] key) {
        return Mono.fromCallable(() -> metrics.get().recordCallable(() -> Optional.ofNullable(repository.get(key))))
                .subscribeOn(storage.scheduler());
    }

    /**
     * Applies {@code record} if it is newer than the stored one (last write wins) and advances the node clock
     * past its timestamp. Emits true if written, false if the stored record was newer.
     */
    public Mono<Boolean> write(byte[] key, Record record) {
        return Mono.fromCallable(() -> {
            clock.observe(record.timestamp());
            return metrics.upsert().recordCallable(() -> repository.upsert(key, record));
        }).subscribeOn(storage.scheduler());
    }

    /**
     * Streams {@code [start, end)} in key order from a snapshot, tombstones included, with backpressure: the
     * iterator advances only as far as downstream requested. Iteration runs on the storage scheduler; the
     * cursor is closed when the stream completes, fails or is cancelled.
     *
     * @param end exclusive bound or null
     */
    public Flux<KeyedRecord> range(byte[] start, byte[] end) {
        return Flux.<KeyedRecord, RecordRepository.Cursor>generate(
                        () -> metrics.range().record(() -> repository.range(start, end)),
                        (cursor, sink) -> {
                            if (cursor.hasNext()) {
                                sink.next(cursor.next());
                            } else {
                                sink.complete();
                            }
                            return cursor;
                        },
                        RecordRepository.Cursor::close)
                .subscribeOn(storage.scheduler());
    }

    /** The node clock used to stamp writes this node coordinates. */
    public HybridLogicalClock clock() {
        return clock;
    }

    /** The storage scheduler (for its queue depth and rejection count). */
    public StorageScheduler scheduler() {
        return storage;
    }

    /**
     * Shuts down: lets queued storage tasks finish (up to 10 s), then closes the repository. Blocks; called
     * by Spring on context close, after the web server has drained in-flight requests.
     */
    @Override
    public void close() throws IOException {
        storage.shutdown(10_000);
        repository.close();
    }

    /** The underlying repository (blocking; storage scheduler only). */
    public RecordRepository repository() {
        return repository;
    }
}
