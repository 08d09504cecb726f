package dev.dht.storage;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * How many records this node's store holds (tombstones included), for the operator's {@code dht status}: LevelDB
 * keeps no count, so it is counted by a scan of one snapshot, at most once per {@link #maxAge} and only when asked.
 * {@link #current} answers the last count, after waiting a short while for a fresh one if the last is stale, so a
 * large store answers at once with a count that lags and a small one answers exactly.
 *
 * <p>Thread-safe. The scan blocks on disk I/O and runs on Reactor's bounded-elastic scheduler, never the caller's
 * thread; {@link #current} never blocks.
 */
public final class RecordCount {
    /** A count no older than this is answered as it is. */
    private final Duration maxAge;
    /** How long {@link #current} waits for a scan it started before it answers the previous count. */
    private final Duration wait;
    private final LongSupplier scan;
    private final AtomicBoolean scanning = new AtomicBoolean();
    /** The last count and {@link System#nanoTime} of its scan's start, or null before the first scan ended. */
    private volatile Counted last;
    private volatile Mono<Long> running = Mono.empty();

    private record Counted(long records, long startedNanos) {
    }

    /** Counts the records of {@code repository}, at most once per {@code maxAge}; waits up to {@code wait}. */
    public RecordCount(RecordRepository repository, Duration maxAge, Duration wait) {
        this(() -> count(repository), maxAge, wait);
    }

    RecordCount(LongSupplier scan, Duration maxAge, Duration wait) {
        this.scan = scan;
        this.maxAge = maxAge;
        this.wait = wait;
    }

    /**
     * The number of records: the last count if younger than {@code maxAge}, else the count of a scan started now if
     * it ends within {@code wait}, else the last count; empty if no scan has ended yet. A failed scan (the store
     * closing) answers the last count too.
     */
    public Mono<Long> current() {
        Counted counted = last;
        if (counted != null && System.nanoTime() - counted.startedNanos() < maxAge.toNanos()) {
            return Mono.just(counted.records());
        }
        if (scanning.compareAndSet(false, true)) {
            long started = System.nanoTime();
            running = Mono.fromCallable(() -> scan.getAsLong())
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnNext(records -> last = new Counted(records, started))
                    .doFinally(signal -> scanning.set(false))
                    .cache();
            running.subscribe(records -> { }, error -> { });
        }
        Mono<Long> previous = Mono.justOrEmpty(counted).map(Counted::records);
        return running.timeout(wait, previous).onErrorResume(error -> previous);
    }

    /** Counts every record of {@code repository} over one snapshot. Blocks (reads the whole store). */
    private static long count(RecordRepository repository) {
        long records = 0;
        try (RecordRepository.Cursor cursor = repository.range(new byte[0], null)) {
            while (cursor.hasNext()) {
                cursor.next();
                records++;
            }
        }
        return records;
    }
}
