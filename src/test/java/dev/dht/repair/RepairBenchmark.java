package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
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
 * Figures for README's "Anti-entropy repair and rebuild", not a test: a 3-node in-process cluster, node 2 misses
 * {@code bench.records} writes at 2/3 and is repaired once while a client reads at a fixed rate from node 0.
 * Prints the repair's time and records/s and the client's p50/p99 before, during and after the repair (the
 * windows before and after show how much the machine's own noise moves them). Runs only with
 * {@code -Dbench=true}: {@code ./mvnw -B -o test -Dtest=RepairBenchmark -Dbench=true
 * -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.records=30000] [-Dbench.max-rate=5000]}. The client's reads
 * at 2/3 also read-repair node 2 before the repair, so fewer records than written are pulled.
 */
@EnabledIfSystemProperty(named = "bench", matches = "true")
class RepairBenchmark {
    private static final int RECORDS = Integer.getInteger("bench.records", 30_000);
    private static final int READS_PER_SECOND = 200;
    private static final String MAX_RATE = System.getProperty("bench.max-rate", "5000");

    @TempDir
    Path root;

    @Test
    void repairOfANodeThatMissedManyWrites() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root,
                Map.of("dht.hints.enabled", "false", "dht.repair.interval", "0", "dht.repair.max-rate", MAX_RATE))) {
            DhtClient coordinator = cluster.client(0);
            cluster.stop(2);
            ForkJoinPool writers = new ForkJoinPool(8);
            writers.submit(() -> IntStream.range(0, RECORDS).parallel()
                    .forEach(i -> assertThat(coordinator.put("key-" + i, "value-" + i + "-".repeat(100), "2/3")).isEqualTo(201))).get();
            writers.shutdown();
            cluster.start(2);

            List<Long> baseline = readsFor(cluster, Duration.ofSeconds(15));   // warm-up
            baseline = readsFor(cluster, Duration.ofSeconds(20));
            List<Long> during = Collections.synchronizedList(new ArrayList<>());
            ScheduledExecutorService load = startReads(cluster, during);
            long started = System.nanoTime();
            List<RepairResult> results = cluster.bean(2, AntiEntropyRepair.class).repairAll().block(Duration.ofMinutes(10));
            double seconds = (System.nanoTime() - started) / 1e9;
            load.shutdown();
            load.awaitTermination(30, TimeUnit.SECONDS);
            List<Long> after = readsFor(cluster, Duration.ofSeconds(15));
            long pulled = results.stream().mapToLong(RepairResult::pulled).sum();
            long compared = results.stream().mapToLong(RepairResult::recordsCompared).sum();
            System.out.printf("BENCH records %d, max-rate %s: repair %.2f s, %d keys streamed (%.0f/s), %d pulled (%.0f/s); %s%n",
                    RECORDS, MAX_RATE, seconds, compared, compared / seconds, pulled, pulled / seconds, results);
            System.out.printf("BENCH client GET at %d/s: before p50 %.1f ms p99 %.1f ms (%d reads); during p50 %.1f ms p99 %.1f ms"
                            + " (%d reads); after p50 %.1f ms p99 %.1f ms (%d reads)%n",
                    READS_PER_SECOND, percentile(baseline, 50), percentile(baseline, 99), baseline.size(),
                    percentile(during, 50), percentile(during, 99), during.size(),
                    percentile(after, 50), percentile(after, 99), after.size());
        }
    }

    private static List<Long> readsFor(InProcessCluster cluster, Duration duration) throws InterruptedException {
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService load = startReads(cluster, latencies);
        Thread.sleep(duration.toMillis());
        load.shutdown();
        load.awaitTermination(30, TimeUnit.SECONDS);
        return latencies;
    }

    /** GETs at {@link #READS_PER_SECOND} from node 0 (2/3), each latency in ns into {@code latencies}. */
    private static ScheduledExecutorService startReads(InProcessCluster cluster, List<Long> latencies) {
        ScheduledExecutorService load = Executors.newScheduledThreadPool(16);
        DhtClient client = cluster.client(0);
        // a ticker hands each read to the pool, so a slow read does not delay the next (latency from the tick)
        load.scheduleAtFixedRate(() -> {
            long start = System.nanoTime();
            load.execute(() -> {
                int status = client.get("key-" + ThreadLocalRandom.current().nextInt(RECORDS), "2/3").statusCode();
                if (status == 200) {
                    latencies.add(System.nanoTime() - start);
                }
            });
        }, 0, 1_000_000 / READS_PER_SECOND, TimeUnit.MICROSECONDS);
        return load;
    }

    private static double percentile(List<Long> latencies, int percent) {
        List<Long> sorted;
        synchronized (latencies) {
            sorted = new ArrayList<>(latencies);
        }
        Collections.sort(sorted);
        return sorted.isEmpty() ? Double.NaN : sorted.get(Math.min(sorted.size() - 1, sorted.size() * percent / 100)) / 1e6;
    }
}
