package dev.dht.gatling;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * The keys the tapes use, as endless Gatling feeders that put a {@code key} into the session.
 *
 * <ul>
 *   <li>Fresh keys: {@code run-<runId>-<n>}, unique to this run (the run id is the start time plus randomness),
 *       numbered in the order they are handed out.</li>
 *   <li>Preloaded keys: {@code pre-<valueSize>-<i>} for {@code i} in {@code [0, keys)}, written in ascending
 *       {@code i} by the {@link Preloader}, so a higher {@code i} is a more recently written key.</li>
 * </ul>
 * Safe to use from any thread.
 */
public final class KeySpace {
    /** Share of reads that the recency-skewed feeder sends to the newest {@link #RECENT_SHARE} of the keys. */
    static final double RECENT_READS = 0.9;
    /** The part of the preloaded keys, the most recently written, that gets {@link #RECENT_READS} of the reads. */
    static final double RECENT_SHARE = 0.1;

    private final String runId = Long.toString(System.currentTimeMillis(), 36)
            + "-" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
    private final AtomicLong freshCount = new AtomicLong();
    private final int valueSize;
    private final int keys;

    /** Key space of one run; {@code valueSize} and {@code keys} name and count the preloaded keys. */
    public KeySpace(int valueSize, int keys) {
        this.valueSize = valueSize;
        this.keys = keys;
    }

    /** The preloaded key number {@code index}. */
    public String preloaded(int index) {
        return "pre-" + valueSize + "-" + index;
    }

    /** The key whose presence tells that all {@code keys} preloaded keys of this value size were written. */
    public String preloadMarker() {
        return "pre-" + valueSize + "-complete-" + keys;
    }

    /** Keys never used before, unique to this run. */
    public Iterator<Map<String, Object>> fresh() {
        return feeder(this::nextFresh);
    }

    /**
     * Fresh keys, except that a share {@code overwriteShare} of them repeats a fresh key handed out earlier in
     * this run (uniformly among them), which turns those PUTs into overwrites.
     */
    public Iterator<Map<String, Object>> freshWithOverwrites(double overwriteShare) {
        return feeder(() -> {
            long handedOut = freshCount.get();
            ThreadLocalRandom random = ThreadLocalRandom.current();
            return handedOut > 0 && random.nextDouble() < overwriteShare ? random.nextLong(handedOut) : nextFresh();
        }, this::freshKey);
    }

    /** Preloaded keys, uniformly. */
    public Iterator<Map<String, Object>> preloadedUniform() {
        return feeder(() -> ThreadLocalRandom.current().nextInt(keys), number -> preloaded((int) number));
    }

    /**
     * Preloaded keys skewed towards the recently written: {@link #RECENT_READS} of the reads go uniformly to the
     * newest {@link #RECENT_SHARE} of the keys, the rest uniformly to all of them.
     */
    public Iterator<Map<String, Object>> preloadedRecent() {
        int recent = Math.max(1, (int) (keys * RECENT_SHARE));
        return feeder(() -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            return random.nextDouble() < RECENT_READS ? keys - 1 - random.nextInt(recent) : random.nextInt(keys);
        }, number -> preloaded((int) number));
    }

    private long nextFresh() {
        return freshCount.getAndIncrement();
    }

    private String freshKey(long number) {
        return "run-" + runId + "-" + number;
    }

    private Iterator<Map<String, Object>> feeder(LongSupplier numbers) {
        return feeder(numbers, this::freshKey);
    }

    private static Iterator<Map<String, Object>> feeder(LongSupplier numbers, LongFunction<String> name) {
        return Stream.generate(() -> Map.<String, Object>of("key", name.apply(numbers.getAsLong()))).iterator();
    }
}
