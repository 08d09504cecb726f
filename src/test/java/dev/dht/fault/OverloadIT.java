package dev.dht.fault;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.fault.OpenLoopLoad.Outcome;
import dev.dht.fault.OpenLoopLoad.Outcomes;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload at twice the breaking rate of a 3-node cluster of real node processes
 * ({@code target/dht.jar}, -Xmx256m each), offered by an open-loop generator ({@link OpenLoopLoad}: PUT+GET at 2/3,
 * values of 1-8 KiB, spread over the three coordinators). Three nodes, not one, because the cluster is what users
 * run and what the other fault cases load: a coordinator's replica calls put load on its peers, so overload of one
 * node reaches the others.
 *
 * <p>First the breaking rate is found with the same generator: a warm-up at the first step's rate until the
 * cluster follows it (at most {@value #MAX_WARM_UP_SECONDS} s: a cold JVM's compiling is not the breaking rate),
 * then the offered rate steps up by {@value #STEP_FACTOR}x every {@value #STEP_SECONDS} s, and the first step the
 * cluster does not follow (below {@value #MIN_OK_PERCENT} % of its requests answered 2xx, counting those without an
 * answer 2 s after the step as failed, or p99 above {@value #MAX_P99_MS} ms), twice in a row, gives the breaking
 * rate; 2x that is at least 2x the highest rate followed. Then twice the breaking rate is offered for
 * {@value #OVERLOAD_SECONDS} s, and then half of it for {@value #RECOVERY_SECONDS} s; if every request at twice the
 * rate was answered 2xx, the breaking rate was two slow steps rather than the cluster's limit (a cluster still cold
 * in the search), and both phases run again at twice the rates, up to {@value #OVERLOAD_ROUNDS} rounds in all.
 * Asserted: every node process alive with no OutOfMemoryError in its log, refusals at twice the breaking rate,
 * every 503 with {@code Retry-After}, no status but 2xx, 503 and 504 (no 500, no 404 or wrong value for an
 * acknowledged key), every acknowledged write readable afterwards, and the success rate back to
 * {@value #MIN_OK_PERCENT} % before the end of the recovery phase. Reported, not asserted:
 * 504s (replica calls that outlasted {@code dht.replica-timeout}), client timeouts (10 s) and I/O errors, all
 * counted as failures, never as successes; the time to recover against a goal of 10 s (a busy machine moves it);
 * heap use. The figures are printed and written as a row of RELIABILITY.md's "Faults" table
 * ({@link ReliabilityReport}).
 */
class OverloadIT {
    private static final List<String> JVM = List.of("-Xmx256m");
    /** Warm-up at the first step's rate until the cluster follows it, at most this long (s). */
    private static final int MAX_WARM_UP_SECONDS = 30;
    private static final double START_RATE = 50;
    private static final double STEP_FACTOR = 1.6;
    private static final int STEP_SECONDS = 2;
    private static final int MAX_STEPS = 12;
    private static final double MIN_OK_PERCENT = 99;
    private static final double MAX_P99_MS = 250;
    private static final int OVERLOAD_SECONDS = 15;
    private static final int RECOVERY_SECONDS = 12;
    /** Overload and recovery phases offered at most, each at twice the rates of the one before (see the class doc). */
    private static final int OVERLOAD_ROUNDS = 4;
    /** The goal for the time to recover, in s; printed against the measurement, not asserted. */
    private static final int RECOVERY_GOAL_SECONDS = 10;
    private static final int MAX_OUTSTANDING = 6000;

    @TempDir
    Path dir;

    /** Closed after the test instance is done, so after {@link #stopLoad}. */
    @AutoClose
    private ProcessCluster cluster;
    private OpenLoopLoad load;

    @AfterEach
    void stopLoad() {
        if (load != null) {
            load.close();
        }
    }

    @Test
    void twiceTheBreakingRateIsRefusedWith503AndRetryAfterAndServiceRecovers() throws Exception {
        long started = System.nanoTime();
        String loadAverage = loadAverage();
        cluster = ProcessCluster.start(3, dir, JVM, nodeCpus());
        System.out.printf(Locale.ROOT, "[overload] cluster up in %.1f s%n", (System.nanoTime() - started) / 1e9);
        load = new OpenLoopLoad(List.of(cluster.url(0), cluster.url(1), cluster.url(2)), "overload", MAX_OUTSTANDING);
        for (int second = 0; second < MAX_WARM_UP_SECONDS; second += STEP_SECONDS) {
            // a cold JVM compiles for its first minutes under load (README, "Cold start"): that is not the breaking rate
            LoadFigures warmUp = step(START_RATE);
            print("warm-up at " + rate(START_RATE), warmUp);
            if (follows(warmUp)) {
                break;
            }
        }

        double breaking = 0;
        List<String> steps = new ArrayList<>();
        double rate = START_RATE;
        for (int step = 0; step < MAX_STEPS && breaking == 0; step++, rate *= STEP_FACTOR) {
            boolean follows = true;
            // a step not followed is run once more: one slow step (a GC, a compile, another process) is not the
            // breaking rate, and twice a breaking rate found that low would be no overload at all
            for (int attempt = 0; attempt < 2 && (attempt == 0 || !follows); attempt++) {
                LoadFigures figures = step(rate);
                follows = follows(figures);
                print("step at " + rate(rate) + (follows ? "" : ", not followed"), figures);
                steps.add(String.format(Locale.ROOT, "%.0f/s: %.0f ok/s, p99 %.0f ms", rate, figures.okPerSecond(),
                        figures.p99Ms()));
            }
            if (!follows) {
                breaking = rate;
            }
        }
        assertThat(breaking).as("the cluster followed every step up to %s: raise MAX_STEPS", rate(rate)).isPositive();

        HeapWatch heap = HeapWatch.start(cluster.urls());
        Outcomes recovery;
        LoadFigures overloaded;
        LoadFigures recovered;
        for (int attempt = 0; ; attempt++) {
            Outcomes overload = load.offer(2 * breaking, Duration.ofSeconds(OVERLOAD_SECONDS));
            recovery = load.offer(breaking / 2, Duration.ofSeconds(RECOVERY_SECONDS));
            overload.awaitAnswered(OpenLoopLoad.REQUEST_TIMEOUT.multipliedBy(2));
            recovery.awaitAnswered(OpenLoopLoad.REQUEST_TIMEOUT.multipliedBy(2));
            overloaded = LoadFigures.of(overload.all(), OVERLOAD_SECONDS);
            recovered = LoadFigures.of(recovery.all(), RECOVERY_SECONDS);
            print("overload at " + rate(2 * breaking), overloaded);
            print("recovery at " + rate(breaking / 2), recovered);
            if (attempt == OVERLOAD_ROUNDS - 1 || overloaded.okShare() < 1) {
                break;
            }
            // every request at twice the rate answered 2xx: the two slow steps that set the breaking rate were not
            // the cluster's limit (fresh-clone CI runs found 128/s so, and then served all of 256/s, and once also
            // all of 512/s: cold JVMs answer slowly at low rates); the breaking rate is at least twice as high, and
            // the overload is offered again at twice that
            breaking *= 2;
        }
        heap.stop();
        double recoverySeconds = secondsToRecover(recovery);
        System.out.printf(Locale.ROOT, "[overload] time to recover: %.1f s (goal %d s); heap %s%n", recoverySeconds,
                RECOVERY_GOAL_SECONDS, heap.summary());

        List<String> dead = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            NodeProcess node = cluster.node(i);
            if (!node.isAlive() || node.output().contains("OutOfMemoryError")) {
                dead.add("node " + i + (node.isAlive() ? " logged OutOfMemoryError" : " exited"));
            }
        }
        List<String> unreadable = readBack();
        System.out.printf(Locale.ROOT, "[overload] %d acknowledged writes read back, %.1f s since start%n",
                load.acknowledged.size(), (System.nanoTime() - started) / 1e9);
        String figures = "breaking rate " + rate(breaking) + " (steps " + String.join("; ", steps) + "); overload "
                + rate(2 * breaking) + " for " + OVERLOAD_SECONDS + " s: " + overloaded.summary() + "; then "
                + rate(breaking / 2) + ": " + recovered.summary() + "; heap " + heap.summary() + "; "
                + load.acknowledged.size() + " writes acknowledged; machine load average " + loadAverage + " at the start";
        ReliabilityReport.row("overload", "overload at 2x the breaking rate (open loop, PUT+GET 2/3, 1-8 KiB), then 0.5x",
                figures, String.format(Locale.ROOT, "%d of 3 nodes died or logged OOM, %d x 503 (%d without Retry-After), "
                        + "%d x 500; recovered in %.1f s; %d acknowledged writes unreadable", dead.size(),
                        overloaded.count(503) + recovered.count(503), overloaded.refusedWithoutRetryAfter()
                                + recovered.refusedWithoutRetryAfter(), overloaded.count(500) + recovered.count(500),
                        recoverySeconds, unreadable.size()));

        assertThat(dead).as("nodes that died or ran out of memory").isEmpty();
        assertThat(overloaded.count(503)).as("refusals at twice the breaking rate: " + overloaded.summary()).isPositive();
        for (LoadFigures phase : List.of(overloaded, recovered)) {
            assertThat(phase.refusedWithoutRetryAfter()).as("503 without Retry-After").isZero();
            assertThat(phase.others().keySet()).as("outcomes other than 2xx, 503 and 504 (504: replica calls that "
                    + "outlasted dht.replica-timeout; reported, not asserted): " + phase.summary())
                    .allMatch(status -> status == 503 || status == 504 || status == Outcome.NOT_SENT
                            || status == Outcome.TIMEOUT || status == Outcome.IO_ERROR);
        }
        assertThat(unreadable).as("acknowledged writes not read back").isEmpty();
        assertThat(recoverySeconds).as("time to recover at half the breaking rate").isLessThan(RECOVERY_SECONDS);
    }

    /**
     * With 2 or more CPUs, a {@code taskset} prefix that holds the three nodes to the last CPU, so that the generator
     * in this JVM, on the others, can offer twice what they serve. Unpinned, on a quiet 2-core machine, the cluster
     * followed 839 req/s and the generator, sharing its cores, sent only about 1000 of the 1678/s of "twice the
     * breaking rate": no overload, no 503. Empty (nodes unpinned) on one CPU or without {@code taskset}.
     */
    private static List<String> nodeCpus() {
        int cpus = Runtime.getRuntime().availableProcessors();
        Path taskset = Path.of("/usr/bin/taskset");
        if (cpus < 2 || !Files.isExecutable(taskset)) {
            return List.of();
        }
        return List.of(taskset.toString(), "-c", String.valueOf(cpus - 1));
    }

    /** Offers {@code perSecond} for one step; requests not answered within 2 s after it count as failed. */
    private LoadFigures step(double perSecond) throws InterruptedException {
        Outcomes outcomes = load.offer(perSecond, Duration.ofSeconds(STEP_SECONDS));
        outcomes.awaitAnswered(Duration.ofSeconds(2));
        return LoadFigures.of(outcomes.all(), STEP_SECONDS, outcomes.sent());
    }

    /** Whether a step was followed: at least {@value #MIN_OK_PERCENT} % answered 2xx, p99 at most {@value #MAX_P99_MS} ms. */
    private static boolean follows(LoadFigures step) {
        return 100 * step.okShare() >= MIN_OK_PERCENT && step.p99Ms() <= MAX_P99_MS;
    }

    /**
     * Seconds from the drop to half the breaking rate until the start of the first 1-s window of requests (by the
     * time they were due) from which on every window had at least {@value #MIN_OK_PERCENT} % answered 2xx; the whole
     * phase if none had.
     */
    private static double secondsToRecover(Outcomes recovery) {
        int recoveredFrom = RECOVERY_SECONDS;
        for (int second = RECOVERY_SECONDS - 1; second >= 0; second--) {
            LoadFigures window = LoadFigures.of(recovery.between(second * 1000.0, (second + 1) * 1000.0), 1);
            if (100 * window.okShare() < MIN_OK_PERCENT) {
                break;
            }
            recoveredFrom = second;
        }
        return recoveredFrom;
    }

    /** Reads every acknowledged write at 2/3 (8 at a time); returns the ids not read back with their value. */
    private List<String> readBack() throws InterruptedException, java.util.concurrent.ExecutionException {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ExecutorService readers = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> reads = new ArrayList<>();
            int n = 0;
            for (var write : load.acknowledged.entrySet()) {
                URI node = cluster.url(n++ % 3);
                reads.add(readers.submit(() -> readBack(http, node, write.getKey(), write.getValue())));
            }
            List<String> unreadable = new ArrayList<>();
            for (Future<String> read : reads) {
                if (read.get() != null) {
                    unreadable.add(read.get());
                }
            }
            return unreadable;
        } finally {
            readers.shutdownNow();
        }
    }

    /**
     * Null if {@code id} reads back with its value; otherwise what it read. A 503, a 504 or an I/O error is retried
     * up to 3 times, a second apart: it says nothing about the write, only that a replica was slow (a 404 or
     * another value is a lost write).
     */
    private static String readBack(HttpClient http, URI node, String id, int length) throws InterruptedException {
        String got = null;
        for (int attempt = 0; attempt < 4; attempt++) {
            try {
                HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(
                        node.resolve("/v0/entity?id=" + id + "&replicas=2/3")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                if (response.statusCode() == 200 && Arrays.equals(response.body(), OpenLoopLoad.value(id, length))) {
                    return null;
                }
                got = id + ": " + (response.statusCode() == 200 ? "wrong value" : "status " + response.statusCode());
                if (response.statusCode() != 503 && response.statusCode() != 504) {
                    return got;
                }
            } catch (IOException e) {
                got = id + ": " + e;
            }
            Thread.sleep(1000);
        }
        return got;
    }

    /** The 1-minute load average of the machine (other processes sharing its cores change every figure). */
    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static void print(String phase, LoadFigures figures) {
        System.out.println("[overload] " + phase + ": " + figures.summary());
    }

    private static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%.0f req/s", perSecond);
    }
}
