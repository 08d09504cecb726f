package dev.dht.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Storage meters: Timer {@code dht.storage.operations} (tag {@code operation}: get, upsert, range open; time on
 * the storage thread), Gauges {@code dht.storage.size} (bytes on disk) and {@code dht.storage.queue.depth}, and
 * FunctionCounter {@code dht.storage.rejections} (tasks refused with 503).
 */
public final class StorageMetrics {
    private final Timer get;
    private final Timer upsert;
    private final Timer range;
    /** What {@link #bind} registered, held here because meters hold their state objects weakly. */
    private Object[] boundSources;

    public StorageMetrics(MeterRegistry registry) {
        this.get = timer(registry, "get");
        this.upsert = timer(registry, "upsert");
        this.range = timer(registry, "range");
    }

    /**
     * Registers the gauges and the rejection counter. The suppliers are read on each scrape; they must not block.
     * They are kept as long as this object is (meters reference their state weakly).
     *
     * @param sizeOnDiskBytes bytes of the store's files on disk
     * @param queueDepth      storage tasks waiting for a storage thread
     * @param rejections      storage tasks refused so far because the queue was full
     */
    public void bind(LongSupplier sizeOnDiskBytes, IntSupplier queueDepth, LongSupplier rejections,
                     MeterRegistry registry) {
        boundSources = new Object[] {sizeOnDiskBytes, queueDepth, rejections};
        Gauge.builder("dht.storage.size", sizeOnDiskBytes, LongSupplier::getAsLong)
                .description("LevelDB files on disk").baseUnit("bytes").register(registry);
        Gauge.builder("dht.storage.queue.depth", queueDepth, IntSupplier::getAsInt)
                .description("Storage tasks waiting for a storage thread").register(registry);
        FunctionCounter.builder("dht.storage.rejections", rejections, LongSupplier::getAsLong)
                .description("Storage tasks refused because the queue was full (answered 503)").register(registry);
    }

    /** Time of single-key reads. */
    public Timer get() {
        return get;
    }

    /** Time of last-write-wins writes. */
    public Timer upsert() {
        return upsert;
    }

    /** Time to open a range cursor (snapshot and seek). */
    public Timer range() {
        return range;
    }

    private static Timer timer(MeterRegistry registry, String operation) {
        return Timer.builder("dht.storage.operations")
                .description("LevelDB operations on the storage scheduler")
                .tag("operation", operation)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(1_000))
                .maximumExpectedValue(Duration.ofSeconds(5))
                .register(registry);
    }
}
