package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Figures for docs/performance.md (anti-entropy repair), not a test. A 3-node in-process cluster; a client reads
 * {@link #READS_PER_SECOND} GET/s at 2/3 from node 0 throughout, each latency kept with its start time (400/s by
 * default: a 5-s window then holds about 2000 reads, so its p99 is not decided by 10 of them).
 *
 * <ol>
 *   <li>Convergence: node 2 misses {@code bench.records} writes at 2/3, is started again and, after a 10 s
 *       warm-up of the load, repaired once with both peers: time, keys streamed/s, records pulled/s, tree time.
 *   <li>Paired windows, for client p99 with and without a repair on a machine whose load moves on its own: in
 *       each of {@code bench.pairs} pairs, {@code bench.missed} keys get a newer version written straight into
 *       the stores of nodes 0 and 1 (a divergence node 2 missed), then a quiet window (Q: no repair) and a repair
 *       window (R: one repair of node 2 with both peers) follow, in the order Q R, then R Q in the next pair, so a
 *       drift of the machine's load does not favour either. A quiet window lasts as long as the last repair did.
 *       Reported: p50/p99 of every window, the median p99 of the Q and of the R windows and their ratio, and the
 *       median of the per-pair ratios; per repair the tree build time and scan records/s (the store's records /
 *       tree time; both nodes scan at once). Warm-up pairs run first and are printed but not counted: at least
 *       {@code bench.warmup-pairs}, then more until a repair window compiled (JIT) for at most
 *       {@code bench.jit-quiet-ms} ms, at most {@code bench.max-warmup-pairs} in all. The first repairs in a JVM
 *       run while the JIT compiles the repair's code (tree hashing, record streams, merge-join) on the same 2 cores,
 *       and they deoptimise the client path's compiled code: the repair's streamed responses are new classes where
 *       Netty's {@code HttpResponseEncoder}, Spring's {@code AbstractServerHttpResponse.doCommit} and Reactor's
 *       operators had seen only the client's ({@code class_check} and {@code bimorphic} traps in a
 *       {@code -XX:+LogCompilation} log), so client requests run in less optimised code until the JIT
 *       recompiled them for both. A node pays that over its first repairs, not per repair; the warm-up pairs
 *       show it.
 * </ol>
 *
 * Runs only with {@code -Dbench=true}: {@code ./mvnw -B -o test -Dtest=RepairBenchmark -Dbench=true
 * -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.records=30000] [-Dbench.pairs=7]
 * [-Dbench.warmup-pairs=2] [-Dbench.jit-quiet-ms=50] [-Dbench.max-warmup-pairs=20] [-Dbench.missed=200] [-Dbench.reads=400] [-Dbench.max-rate=5000]
 * [-Dbench.scan-rate=20000]}; prints lines starting with BENCH. The client's reads at
 * 2/3 also read-repair node 2, so fewer records than written are pulled in the convergence repair.
 */
@EnabledIfSystemProperty(named = "bench", matches = "true")
class RepairBenchmark {
    private static final int RECORDS = Integer.getInteger("bench.records", 30_000);
    private static final int PAIRS = Integer.getInteger("bench.pairs", 7);
    private static final int MISSED = Integer.getInteger("bench.missed", 200);
    private static final String MAX_RATE = System.getProperty("bench.max-rate", "5000");
    private static final String SCAN_RATE = System.getProperty("bench.scan-rate", "20000");
    private static final int WARMUP_PAIRS = Integer.getInteger("bench.warmup-pairs", 2);
    private static final int MAX_WARMUP_PAIRS = Integer.getInteger("bench.max-warmup-pairs", 20);
    private static final long JIT_QUIET_MS = Long.getLong("bench.jit-quiet-ms", 50);
    private static final int READS_PER_SECOND = Integer.getInteger("bench.reads", 400);
    private static final Duration GAP = Duration.ofSeconds(2);

    @TempDir
    Path root;
    /** (start nanoTime, latency ns or -1 for an answer other than 200) of every client read. */
    private final Queue<long[]> reads = new ConcurrentLinkedQueue<>();

    @Test
    void clientLatencyWithAndWithoutRepairInPairedWindows() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of("dht.hints.enabled", "false",
                "dht.repair.interval", "0", "dht.repair.max-rate", MAX_RATE, "dht.repair.scan-rate", SCAN_RATE))) {
            System.out.printf("BENCH settings: records %d, pairs %d after %d-%d unmeasured (until a repair compiled for at "
                    + "most %d ms), missed %d per pair, max-rate %s, scan-rate %s, client %d GET/s at 2/3; load average %s%n",
                    RECORDS, PAIRS, WARMUP_PAIRS, MAX_WARMUP_PAIRS, JIT_QUIET_MS, MISSED, MAX_RATE, SCAN_RATE,
                    READS_PER_SECOND, loadAverage());
            cluster.stop(2);
            write(cluster.client(0));
            cluster.start(2);
            ScheduledExecutorService load = startReads(cluster.client(0));
            try {
                Thread.sleep(10_000);
                Window converge = repairWindow(cluster, "converge");
                System.out.printf("BENCH converge: node 2 missed %d writes; repair %.2f s, %d keys streamed (%.0f/s), "
                                + "%d pulled (%.0f/s), trees %s; client during it %s; %s%n", RECORDS, converge.seconds(),
                        converge.compared(), converge.compared() / converge.seconds(), converge.pulled(),
                        converge.pulled() / converge.seconds(), converge.trees(), converge.latency(), converge.jvm());
                pairs(cluster, converge.nanos());
            } finally {
                load.shutdown();
                load.awaitTermination(30, TimeUnit.SECONDS);
            }
        }
    }

    private void pairs(InProcessCluster cluster, long firstQuietNanos) throws InterruptedException {
        List<Double> quietP99 = new ArrayList<>();
        List<Double> repairP99 = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        long[] quietNanos = {firstQuietNanos};
        int warmups = 0;
        int index = 0;
        while (warmups < MAX_WARMUP_PAIRS) {
            Window repair = pair(cluster, index++, "warm-up pair " + warmups++, quietNanos)[1];
            if (warmups >= WARMUP_PAIRS && repair.jvm().jitMillis() <= JIT_QUIET_MS) {
                break;
            }
        }
        for (int pair = 0; pair < PAIRS; pair++) {
            Window[] windows = pair(cluster, index++, "pair " + pair, quietNanos);
            quietP99.add(windows[0].latency().p99());
            repairP99.add(windows[1].latency().p99());
            ratios.add(windows[1].latency().p99() / windows[0].latency().p99());
        }
        double quietMedian = median(quietP99);
        double repairMedian = median(repairP99);
        System.out.printf("BENCH summary over %d pairs after %d warm-up pairs: median client p99 quiet %.1f ms, during "
                        + "repair %.1f ms: ratio of medians %.2f; median of the per-pair ratios %.2f (per pair: %s)%n",
                PAIRS, warmups, quietMedian, repairMedian, repairMedian / quietMedian, median(ratios),
                ratios.stream().map(ratio -> String.format("%.2f", ratio)).toList());
    }

    /**
     * One pair of windows after a divergence: quiet then repair for an even {@code index}, repair then quiet for an
     * odd one; the quiet window lasts as long as the last repair ({@code quietNanos}, updated). Prints both.
     *
     * @return {quiet, repair}
     */
    private Window[] pair(InProcessCluster cluster, int index, String name, long[] quietNanos)
            throws InterruptedException {
        diverge(cluster);
        Thread.sleep(GAP.toMillis());
        Window quiet;
        Window repair;
        if (index % 2 == 0) {
            quiet = quietWindow(name + " Q", quietNanos[0]);
            Thread.sleep(GAP.toMillis());
            repair = repairWindow(cluster, name + " R");
        } else {
            repair = repairWindow(cluster, name + " R");
            Thread.sleep(GAP.toMillis());
            quiet = quietWindow(name + " Q", repair.nanos());
        }
        quietNanos[0] = repair.nanos();
        Thread.sleep(GAP.toMillis());
        for (Window window : index % 2 == 0 ? List.of(quiet, repair) : List.of(repair, quiet)) {
            System.out.printf("BENCH %s: %.1f s (JVM uptime %.1f-%.1f s), client %s%s; %s; load average %s%n",
                    window.name(), window.seconds(), uptimeAt(window.started()), uptimeAt(window.ended()),
                    window.latency(), window.results() == null ? "" : String.format("; repair %d keys streamed, "
                            + "%d pulled, trees %s", window.compared(), window.pulled(), window.trees()),
                    window.jvm(), window.load());
        }
        return new Window[] {quiet, repair};
    }

    /**
     * The JVM's uptime in seconds at {@code nanoTime} (a {@link System#nanoTime} reading), to find a window in
     * JVM logs stamped with uptime, such as {@code -XX:+LogCompilation}'s.
     */
    private static double uptimeAt(long nanoTime) {
        return ManagementFactory.getRuntimeMXBean().getUptime() / 1e3 - (System.nanoTime() - nanoTime) / 1e9;
    }


    /** Writes every key at 2/3 through {@code client}, 4 at a time, retrying a 503 (the machine is busy). */
    private static void write(DhtClient client) throws Exception {
        ForkJoinPool writers = new ForkJoinPool(4);
        try {
            writers.submit(() -> IntStream.range(0, RECORDS).parallel().forEach(i -> {
                int status = 0;
                for (int attempt = 0; attempt < 5 && status != 201; attempt++) {
                    status = client.put("key-" + i, "value-" + i + "-".repeat(100), "2/3");
                }
                assertThat(status).as("key-%d", i).isEqualTo(201);
            })).get();
        } finally {
            writers.shutdown();
        }
    }

    /** A newer version of {@link #MISSED} random keys, written straight into the stores of nodes 0 and 1. */
    private static void diverge(InProcessCluster cluster) {
        long timestamp = cluster.bean(0, LocalStore.class).clock().now();
        List<KeyedRecord> records = ThreadLocalRandom.current().ints(0, RECORDS).distinct().limit(MISSED)
                .mapToObj(i -> new KeyedRecord(("key-" + i).getBytes(StandardCharsets.UTF_8), Record.value(timestamp,
                        ("value-" + i + "-new-" + timestamp).getBytes(StandardCharsets.UTF_8))))
                .toList();
        cluster.bean(0, LocalStore.class).writeAll(records).block(Duration.ofMinutes(1));
        cluster.bean(1, LocalStore.class).writeAll(records).block(Duration.ofMinutes(1));
    }

    private Window repairWindow(InProcessCluster cluster, String name) {
        JvmActivity before = JvmActivity.now();
        long started = System.nanoTime();
        List<RepairResult> results = cluster.bean(2, AntiEntropyRepair.class).repairAll().block(Duration.ofMinutes(30));
        long ended = System.nanoTime();
        assertThat(results).allSatisfy(result -> assertThat(result.error()).isNull());
        return new Window(name, started, ended, latency(started, ended), loadAverage(), JvmActivity.since(before), results);
    }

    private Window quietWindow(String name, long nanos) throws InterruptedException {
        JvmActivity before = JvmActivity.now();
        long started = System.nanoTime();
        TimeUnit.NANOSECONDS.sleep(nanos);
        long ended = System.nanoTime();
        return new Window(name, started, ended, latency(started, ended), loadAverage(), JvmActivity.since(before), null);
    }

    /** GETs of random keys at {@link #READS_PER_SECOND} (2/3), latency from the tick, so a slow read delays none. */
    private ScheduledExecutorService startReads(DhtClient client) {
        ScheduledExecutorService load = Executors.newScheduledThreadPool(16);
        load.scheduleAtFixedRate(() -> {
            long start = System.nanoTime();
            load.execute(() -> {
                int status = client.get("key-" + ThreadLocalRandom.current().nextInt(RECORDS), "2/3").statusCode();
                reads.add(new long[] {start, status == 200 ? System.nanoTime() - start : -1});
            });
        }, 0, 1_000_000 / READS_PER_SECOND, TimeUnit.MICROSECONDS);
        return load;
    }

    /** The reads that started in [started, ended). */
    private Latency latency(long started, long ended) {
        List<Long> latencies = new ArrayList<>();
        int failed = 0;
        for (long[] read : reads) {
            if (read[0] >= started && read[0] < ended) {
                if (read[1] < 0) {
                    failed++;
                } else {
                    latencies.add(read[1]);
                }
            }
        }
        Collections.sort(latencies);
        return new Latency(percentile(latencies, 50), percentile(latencies, 99), latencies.size(), failed);
    }

    private static double percentile(List<Long> sorted, int percent) {
        return sorted.isEmpty() ? Double.NaN : sorted.get(Math.min(sorted.size() - 1, sorted.size() * percent / 100)) / 1e6;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** Client latency of a window: p50 and p99 in ms of the reads answered 200, and the count of the others. */
    private record Latency(double p50, double p99, int reads, int failed) {
        @Override
        public String toString() {
            return String.format("p50 %.1f ms p99 %.1f ms (%d reads, %d not 200)", p50, p99, reads, failed);
        }
    }

    /** One measured window; {@code results} are the repair's (null for a quiet window). */
    /**
     * What the JVM (all three nodes and the client) spent besides the work itself: JIT compilation and GC, in ms
     * and collections. A window whose p99 moved with these moved with the JVM, not (only) with the repair.
     */
    private record JvmActivity(long jitMillis, long gcCount, long gcMillis) {
        static JvmActivity now() {
            CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
            long count = 0;
            long millis = 0;
            for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                count += Math.max(0, gc.getCollectionCount());
                millis += Math.max(0, gc.getCollectionTime());
            }
            return new JvmActivity(jit == null ? 0 : jit.getTotalCompilationTime(), count, millis);
        }

        /** The activity from {@code before} to now. */
        static JvmActivity since(JvmActivity before) {
            JvmActivity after = now();
            return new JvmActivity(after.jitMillis - before.jitMillis, after.gcCount - before.gcCount,
                    after.gcMillis - before.gcMillis);
        }

        /** "JIT N ms, GC N (N ms)". */
        @Override
        public String toString() {
            return String.format("JIT %d ms, GC %d (%d ms)", jitMillis, gcCount, gcMillis);
        }
    }

    private record Window(String name, long started, long ended, Latency latency, String load, JvmActivity jvm,
                          List<RepairResult> results) {
        long nanos() {
            return ended - started;
        }

        double seconds() {
            return nanos() / 1e9;
        }

        long compared() {
            return results.stream().mapToLong(RepairResult::recordsCompared).sum();
        }

        long pulled() {
            return results.stream().mapToLong(RepairResult::pulled).sum();
        }

        /** Per peer: tree build time and the scan rate it implies over the store's {@link #RECORDS} records. */
        String trees() {
            return results.stream().map(result -> String.format("%.2f s (%.0f records/s)", result.treeMillis() / 1e3,
                    RECORDS / Math.max(result.treeMillis() / 1e3, 1e-3))).toList().toString();
        }
    }
}
