package dev.dht.storage;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.StorageMetrics;
import dev.dht.node.HybridLogicalClock;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Reactive face of this node's {@link RecordRepository}: every call runs on the {@link StorageScheduler},
 * so it is safe to call from a Netty event loop. A call the storage threads cannot take fails with
 * {@link OverloadedException} (answered 503): {@link OverloadReason#STORAGE_QUEUE_FULL} when the queue is full,
 * {@link OverloadReason#SHUTTING_DOWN} once the store is closing; a write below the free-space reserve fails with
 * {@link OverloadReason#DISK_FULL}. The scheduler's own refusal is turned into these here, at the store's boundary.
 *
 * <p>Writes subscribed on an event loop go to the storage threads with the other writes of the loop's turn and
 * complete back on that loop ({@link StorageHandOff}): one hand-off per turn instead of one per write, and one
 * storage thread at a time in LevelDB's writer queue per loop instead of several. Reads go one task each and
 * complete on their storage thread: grouped, every answer of a turn would wait for the turn's last read, for no
 * gain in GETs.
 */
public final class LocalStore implements AutoCloseable {
    private final RecordRepository repository;
    private final StorageScheduler storage;
    private final HybridLogicalClock clock;
    private final StorageMetrics metrics;
    private final StorageHandOff handOff;

    /** A store whose operations are timed into {@code metrics}. */
    public LocalStore(RecordRepository repository, StorageScheduler storage, HybridLogicalClock clock,
                      StorageMetrics metrics) {
        this.repository = repository;
        this.storage = storage;
        this.clock = clock;
        this.metrics = metrics;
        this.handOff = new StorageHandOff(storage);
    }

    /** A store without metrics (meters go to an empty registry). */
    public LocalStore(RecordRepository repository, StorageScheduler storage, HybridLogicalClock clock) {
        this(repository, storage, clock, new StorageMetrics(new CompositeMeterRegistry()));
    }

    /**
     * The stored record, tombstones included; empty Optional if the key was never written. A row cache hit
     * ({@link RecordRepository#cached}) is answered on the calling thread without I/O; a miss runs on the
     * storage scheduler.
     */
    public Mono<Optional<Record>> read(byte[] key) {
        Record hit = repository.cached(key);
        if (hit != null) {
            return Mono.just(Optional.of(hit));
        }
        return Mono.fromCallable(() -> metrics.get().recordCallable(() -> Optional.ofNullable(repository.get(key))))
                .subscribeOn(storage.scheduler())
                .onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /**
     * The stored records of {@code keys}, in order (empty Optional where a key was never written), read in one
     * storage task, or on the calling thread without I/O when every key is in the row cache. Reading stops
     * before the first record that would take the records' encoded bytes past {@code maxBytes}: the list holds
     * the keys read, a prefix of {@code keys} (possibly empty), and no more than that is held in memory.
     */
    public Mono<List<Optional<Record>>> readAll(List<byte[]> keys, int maxBytes) {
        List<Optional<Record>> hits = new ArrayList<>(keys.size());
        long bytes = 0;
        for (byte[] key : keys) {
            Record hit = repository.cached(key);
            if (hit == null) {
                return Mono.fromCallable(() -> readAllBlocking(keys, maxBytes)).subscribeOn(storage.scheduler())
                        .onErrorMap(RejectedExecutionException.class, this::refused);
            }
            bytes += hit.encodedSize();
            if (bytes > maxBytes) {
                break;
            }
            hits.add(Optional.of(hit));
        }
        return Mono.just(hits);
    }

    /** {@link #readAll}'s storage task; blocking. */
    private List<Optional<Record>> readAllBlocking(List<byte[]> keys, int maxBytes) throws Exception {
        List<Optional<Record>> read = new ArrayList<>(keys.size());
        long bytes = 0;
        for (byte[] key : keys) {
            Record record = metrics.get().recordCallable(() -> repository.get(key));
            bytes += record == null ? 0 : record.encodedSize();
            if (bytes > maxBytes) {
                break;
            }
            read.add(Optional.ofNullable(record));
        }
        return read;
    }

    /**
     * Applies {@code record} if it is newer than the stored one (last write wins) and advances the node clock
     * past its timestamp. Emits true if written, false if the stored record was newer.
     *
     * <p>Runs on the storage scheduler, although a LevelDB write without sync reaches only the OS page cache: a
     * write may still wait on the disk. The last-write-wins check may read the stored record first (a block
     * cache miss reads a table file; {@link LevelDbRecordRepository#upsert} says when), and LevelDB throttles
     * writers while compaction lags (a 1-ms sleep per write once level 0 holds 8 files, a full stop at 12, a wait
     * while a full memtable is flushed). On an event loop such a wait would stall every connection of that loop.
     * Subscribed on an event loop, the write goes with the other writes of the loop's turn and completes on that loop
     * ({@link StorageHandOff}).
     */
    public Mono<Boolean> write(byte[] key, Record record) {
        return handOff.call(() -> apply(key, record)).onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /**
     * Applies each of {@code records} as {@link #write} does, one after another in one storage task (a batch
     * costs one hand-off to the storage scheduler, not one per record). Completes empty once all are applied; a
     * full storage queue fails it with {@link OverloadedException} before any is applied.
     */
    public Mono<Void> writeAll(List<KeyedRecord> records) {
        return handOff.<Void>call(() -> {
            for (KeyedRecord entry : records) {
                apply(entry.key(), entry.record());
            }
            return null;
        }).onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /**
     * Deletes, without a tombstone, the key of each of {@code records} whose stored record is still that one
     * ({@link RecordRepository#purge}: a record written since is kept), in one storage task: for records this node
     * no longer replicates. Completes with the number deleted; a full storage queue fails it with
     * {@link OverloadedException} before any is deleted.
     */
    public Mono<Integer> purgeAll(List<KeyedRecord> records) {
        return handOff.call(() -> {
            int purged = 0;
            for (KeyedRecord entry : records) {
                purged += repository.purge(entry.key(), entry.record()) ? 1 : 0;
            }
            return purged;
        }).onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /** The storage scheduler's refusal of a task as the overload it means. */
    private OverloadedException refused(RejectedExecutionException rejected) {
        if (storage.isShutdown()) {
            return new OverloadedException(OverloadReason.SHUTTING_DOWN, "storage stopped: the node is shutting down",
                    rejected);
        }
        return new OverloadedException(OverloadReason.STORAGE_QUEUE_FULL,
                "storage queue full (" + storage.queueCapacity() + " tasks waiting)", rejected);
    }

    /** One last-write-wins write, timed, advancing the clock; blocking (storage scheduler only). */
    private boolean apply(byte[] key, Record record) {
        clock.observe(record.timestamp());
        return metrics.upsert().record(() -> repository.upsert(key, record));
    }

    /**
     * Streams {@code [start, end)} in key order from a snapshot, tombstones included, with backpressure: the
     * iterator advances only as far as downstream requested. Iteration runs on the storage scheduler; the
     * cursor is closed when the stream completes, fails or is cancelled. A full storage queue fails the stream
     * with {@link OverloadedException}, also mid-stream.
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
                .subscribeOn(storage.scheduler())
                .transform(Operators.<KeyedRecord, KeyedRecord>lift(
                        (scannable, downstream) -> new RejectedRequestToError<>(downstream)))
                .onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /**
     * Like {@link #range}, in batches: each batch is read by one storage task and holds up to {@code maxRecords}
     * records, fewer once their keys and values reach {@code maxBytes} (at least one record: a larger one is a batch
     * of its own). A reader that requests one batch at a time so holds at most two batches, bounded in bytes rather
     * than records whatever the values' sizes.
     *
     * @param end exclusive bound or null
     */
    public Flux<List<KeyedRecord>> rangeBatches(byte[] start, byte[] end, int maxRecords, long maxBytes) {
        return rangeBatches(start, end, maxRecords, maxBytes, 0, maxRecords);
    }

    /**
     * Like {@link #rangeBatches(byte[], byte[], int, long)}, only the records (tombstones included) whose timestamp
     * is at least {@code minTimestamp}: the others are read and skipped on the storage thread, without decoding them
     * ({@link RecordRepository.Cursor#nextIfStampedSince}). A storage task reads
     * at most {@code maxScanned} records, so a batch may be empty (records were read, none matched) while the range
     * goes on; the stream completes after the last record.
     *
     * @param end exclusive bound or null
     */
    public Flux<List<KeyedRecord>> rangeBatches(byte[] start, byte[] end, int maxRecords, long maxBytes,
                                                long minTimestamp, int maxScanned) {
        return Flux.<List<KeyedRecord>, RecordRepository.Cursor>generate(
                        () -> metrics.range().record(() -> repository.range(start, end)),
                        (cursor, sink) -> {
                            List<KeyedRecord> batch = new ArrayList<>();
                            long bytes = 0;
                            int scanned = 0;
                            while (batch.size() < maxRecords && bytes < maxBytes && scanned < maxScanned
                                    && cursor.hasNext()) {
                                KeyedRecord entry = cursor.nextIfStampedSince(minTimestamp);
                                scanned++;
                                if (entry != null) {
                                    batch.add(entry);
                                    bytes += entry.key().length + entry.record().value().length;
                                }
                            }
                            if (batch.isEmpty() && !cursor.hasNext()) {
                                sink.complete();
                            } else {
                                sink.next(batch);
                            }
                            return cursor;
                        },
                        RecordRepository.Cursor::close)
                .subscribeOn(storage.scheduler())
                .transform(Operators.<List<KeyedRecord>, List<KeyedRecord>>lift(
                        (scannable, downstream) -> new RejectedRequestToError<>(downstream)))
                .onErrorMap(RejectedExecutionException.class, this::refused);
    }

    /**
     * {@code subscribeOn} runs each {@code request(n)} as a storage task; when the queue refuses that task it
     * throws the {@link RejectedExecutionException} out of {@code request(n)} (into whoever asked for more, e.g.
     * a Netty event loop) instead of signalling it, and the stream then neither continues nor ends. This turns
     * that throw into cancel + onError. Signals are serialised, since a storage thread may still be emitting.
     */
    private static final class RejectedRequestToError<T> implements CoreSubscriber<T>, Subscription {
        private final CoreSubscriber<T> downstream;
        private Subscription upstream;

        RejectedRequestToError(CoreSubscriber<? super T> downstream) {
            this.downstream = Operators.serialize(downstream);
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            upstream = subscription;
            downstream.onSubscribe(this);
        }

        @Override
        public void onNext(T value) {
            downstream.onNext(value);
        }

        @Override
        public void onError(Throwable error) {
            downstream.onError(error);
        }

        @Override
        public void onComplete() {
            downstream.onComplete();
        }

        @Override
        public void request(long n) {
            try {
                upstream.request(n);
            } catch (RejectedExecutionException rejected) {
                upstream.cancel();
                downstream.onError(rejected);
            }
        }

        @Override
        public void cancel() {
            upstream.cancel();
        }

        @Override
        public Context currentContext() {
            return downstream.currentContext();
        }
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
