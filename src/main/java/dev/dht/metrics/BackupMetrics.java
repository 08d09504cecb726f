package dev.dht.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Meters of cluster backups: {@code dht.backup.records} and {@code dht.backup.bytes} (counters of the records and
 * record bytes this node wrote into backups), {@code dht.backup.last.success.time} (gauge, epoch seconds at which
 * the last backup this node coordinated, or found at the location on start, completed; 0 before any). In
 * Prometheus: {@code dht_backup_records_total}, {@code dht_backup_bytes_total}, {@code dht_backup_last_success_time}.
 * Thread-safe.
 */
public final class BackupMetrics {
    private final Counter records;
    private final Counter bytes;
    private final AtomicLong lastSuccessSeconds = new AtomicLong();

    /** Registers the meters in {@code registry}. */
    public BackupMetrics(MeterRegistry registry) {
        records = Counter.builder("dht.backup.records").description("records this node wrote into backups")
                .register(registry);
        bytes = Counter.builder("dht.backup.bytes").description("key and value bytes this node wrote into backups")
                .register(registry);
        Gauge.builder("dht.backup.last.success.time", lastSuccessSeconds, AtomicLong::get)
                .description("epoch seconds of the last completed cluster backup known to this node, 0 if none")
                .register(registry);
    }

    /** Counts {@code count} records of {@code size} bytes written. */
    public void written(long count, long size) {
        records.increment(count);
        bytes.increment(size);
    }

    /** A backup completed at {@code epochSeconds} (kept if newer than the one known). */
    public void succeeded(long epochSeconds) {
        lastSuccessSeconds.accumulateAndGet(epochSeconds, Math::max);
    }
}
