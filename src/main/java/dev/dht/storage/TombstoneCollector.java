package dev.dht.storage;

import dev.dht.node.HybridLogicalClock;
import dev.dht.pacing.Pacer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tombstone garbage collection: a background pass over a snapshot of the store that deletes tombstones and
 * expired values older than {@code dht.tombstone.gc-grace}, then compacts the range it purged so that LevelDB
 * gives the disk space back. A tombstone's age counts from its write's timestamp, an expired value's from its
 * expiry, both against the node clock's wall clock ({@link HybridLogicalClock#wallMillis()}). The grace is what
 * makes purging safe (Cassandra's gc_grace_seconds; docs/replication-and-repair.md, "Tombstone GC").
 *
 * <p>Each candidate is deleted with {@link RecordRepository#purge}, which re-reads the key under its stripe lock
 * and keeps it if it changed since the snapshot, so a write racing with the pass is never removed.
 *
 * <p>Threading: passes run on one thread of their own ({@code tombstone-gc}), never on an event loop or a storage
 * thread, throttled to {@code rate} purged records per second: that thread waits for each purged record's turn
 * ({@link Pacer#acquire}; the scan of live records is not throttled, and a pass that fell behind, say after a long
 * run of live records, makes up at most one {@link Pacer#BURST}), so a backlog of deletes does not take the disk
 * from client requests. Meters: Counters {@code dht.tombstone.purged} (records) and
 * {@code dht.tombstone.reclaimed.bytes} (key and record bytes purged).
 */
public final class TombstoneCollector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TombstoneCollector.class);
    private static final byte[] FIRST_KEY = new byte[0];

    private final RecordRepository repository;
    private final HybridLogicalClock clock;
    private final long graceMillis;
    private final int rate;
    private final Counter purged;
    private final Counter reclaimedBytes;
    private ScheduledExecutorService executor;
    private volatile boolean stopped;
    private volatile BooleanSupplier suspended = () -> false;

    /**
     * @param grace purge tombstones and expired values older than this
     * @param rate  most records purged per second (at least 1)
     */
    public TombstoneCollector(RecordRepository repository, HybridLogicalClock clock, Duration grace, int rate,
                              MeterRegistry registry) {
        if (rate < 1) {
            throw new IllegalArgumentException("rate must be at least 1 record/s, was " + rate);
        }
        this.repository = repository;
        this.clock = clock;
        this.graceMillis = grace.toMillis();
        this.rate = rate;
        this.purged = Counter.builder("dht.tombstone.purged")
                .description("Tombstones and expired values purged after dht.tombstone.gc-grace").register(registry);
        this.reclaimedBytes = Counter.builder("dht.tombstone.reclaimed.bytes").baseUnit("bytes")
                .description("Key and record bytes of the purged records").register(registry);
    }

    /**
     * Runs {@link #purge()} every {@code interval}, the first one {@code interval} after now, on the
     * {@code tombstone-gc} thread. A failed pass is logged; the next one runs as planned.
     */
    public synchronized void start(Duration interval) {
        if (executor != null) {
            throw new IllegalStateException("already started");
        }
        executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "tombstone-gc");
            thread.setDaemon(true);
            return thread;
        });
        long millis = interval.toMillis();
        executor.scheduleWithFixedDelay(this::purgeLogged, millis, millis, TimeUnit.MILLISECONDS);
    }

    private void purgeLogged() {
        if (suspended.getAsBoolean()) {
            LOG.info("tombstone GC pass skipped: a membership change is in progress");
            return;
        }
        try {
            long count = purge();
            if (count > 0) {
                LOG.info("tombstone GC purged {} records", count);
            }
        } catch (RuntimeException e) {
            if (repository.isOpen()) {
                LOG.warn("tombstone GC pass failed: {}", e.toString());
            }
        }
    }

    /**
     * One pass over the whole store: purges every tombstone and expired value older than the grace, then
     * compacts from the first to the last purged key. Blocks for the whole pass (disk I/O, throttled); call it on
     * a thread that may block, never on an event loop.
     *
     * @return records purged
     */
    public long purge() {
        long horizon = clock.wallMillis() - graceMillis;
        long count = 0;
        byte[] first = null;
        byte[] last = null;
        Pacer pacer = Pacer.perSecond(rate);
        try (RecordRepository.Cursor cursor = repository.range(FIRST_KEY, null)) {
            while (!stopped && !suspended.getAsBoolean() && cursor.hasNext()) {
                KeyedRecord entry = cursor.next();
                if (!isPurgeable(entry.record(), horizon) || !repository.purge(entry.key(), entry.record())) {
                    continue;
                }
                count++;
                purged.increment();
                reclaimedBytes.increment(entry.key().length + entry.record().encodedSize());
                first = first == null ? entry.key() : first;
                last = entry.key();
                pacer.acquire(1);
            }
        }
        if (count > 0 && !stopped) {
            repository.compact(first, last);
        }
        return count;
    }

    /**
     * Purges nothing while {@code condition} holds: no pass starts, and a pass under way ends at its next record. A
     * membership change suspends anti-entropy repair, so a replica that missed a delete gets no repair during it;
     * purging the delete's tombstone elsewhere meanwhile could bring the value back (Cassandra's gc_grace rule).
     */
    public void suspendWhile(BooleanSupplier condition) {
        this.suspended = condition;
    }

    /**
     * True if {@code record} is a tombstone written before {@code horizonMillis} or a value that expired before it
     * (wall-clock ms since the epoch).
     */
    static boolean isPurgeable(Record record, long horizonMillis) {
        if (record.isTombstone()) {
            return HybridLogicalClock.millisOf(record.timestamp()) < horizonMillis;
        }
        return record.expiresAtMillis() != 0 && record.expiresAtMillis() < horizonMillis;
    }

    /**
     * Stops the schedule and ends a pass under way at its next record (purged records stay purged; the range is
     * compacted by the next pass or LevelDB itself). Blocks up to 10 s for that pass; called on context close,
     * before the store closes. The thread is not interrupted: an interrupt would close the pure-Java engine's
     * files (see {@link StorageScheduler}).
     */
    @Override
    public synchronized void close() {
        stopped = true;
        if (executor != null) {
            executor.shutdown();
            try {
                executor.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
