package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import dev.dht.testing.V0Uri;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Joins over node processes. A 4th node process joins a running 3-process cluster: refused (and retrying) while a
 * member is down, then killed with SIGKILL mid-stream and restarted on the same data dir: it resumes the join,
 * streams less than everything it gains (its checkpoint skips what it stored before the kill), and ends a NORMAL
 * member holding every key it gains. A member (a coordinator of writes too) frozen by SIGSTOP across a phase change
 * holds the join, which completes after SIGCONT with every acknowledged write readable through the joiner.
 */
class JoinProcessIT {
    private static final int KEYS = 20_000;
    private static final Duration CHANGE_TIME = Duration.ofMinutes(3);
    /**
     * A change-failure-timeout above the time a killed joiner takes to start again on a loaded machine (over a
     * minute): the joiner's restart is to resume its join, not to have it rolled back.
     */
    private static final List<String> JVM = List.of("-Xmx256m", "-Ddht.change-failure-timeout=180s");
    private static final Pattern STREAMED = Pattern.compile("(?m)^dht_stream_records_total\\{[^}]*} ([0-9.E]+)$");

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ObjectMapper json = new ObjectMapper();

    @TempDir
    Path dir;

    @AutoClose
    private ProcessCluster cluster;

    @AutoClose
    private NodeProcess joiner;

    @Test
    void aJoinerKilledMidStreamResumesAndStreamsLessTheSecondTime() throws Exception {
        cluster = ProcessCluster.start(3, dir, JVM);
        load();

        cluster.stop(2);
        int port = NodeProcess.freePort();
        URI joinerUrl = URI.create("http://localhost:" + port);
        joiner = startJoiner(port, "first");
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).until(() ->
                joiner.output().contains("join not started") && joiner.output().contains("is down"));
        JsonNode whileDown = view(cluster.url(0));
        assertThat(whileDown.get("members").size()).as("no join while a member is down").isEqualTo(3);
        assertThat(whileDown.get("change").isNull()).isTrue();

        cluster.restart(2);
        // every source past its first checkpoint (RecordStreaming.CHECKPOINT_EVERY records), none done yet
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(20)).until(() -> streamed(joinerUrl) > 9_000);
        assertThat(joiner.kill()).isEqualTo(137);
        assertThat(view(cluster.url(0)).path("change").path("phase").asText()).isEqualTo("streaming");

        joiner = startJoiner(port, "second");
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode view = view(cluster.url(0));
            assertThat(view.get("members").size()).isEqualTo(4);
            assertThat(view.get("change").isNull()).as("join done: %s", view).isTrue();
        });

        ClusterView joined = ClusterView.initial(List.of(cluster.url(0), cluster.url(1), cluster.url(2)), 3)
                .withJoining(joinerUrl);
        Placement placement = new Placement(joined);
        int gained = 0;
        for (int i = 0; i < KEYS; i++) {
            byte[] key = key(i).getBytes(StandardCharsets.UTF_8);
            if (placement.newReplicas(key, 3).stream().map(Node::url).anyMatch(joinerUrl::equals)) {
                gained++;
            }
        }
        // every gained key comes in full once, from its primary source (the old replicas agree: nothing to fetch
        // after the digests), so a whole stream is `gained` records; each source had passed a checkpoint
        double second = streamed(joinerUrl);
        assertThat(second).as("records streamed after the restart, of %d in a whole stream", gained)
                .isPositive().isLessThanOrEqualTo(gained - 3 * 2048);
        for (int i = 0; i < KEYS; i += 7) {
            HttpResponse<String> read = http.send(HttpRequest.newBuilder(V0Uri.raw(port,
                    "/v0/entity?id=" + key(i) + "&replicas=3/3")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(read.statusCode()).as("%s at 3/3 through the joiner", key(i)).isEqualTo(200);
            assertThat(read.body()).isEqualTo(value(i));
        }
    }

    /**
     * A member frozen (SIGSTOP) while a join streams, for less than {@code dht.change-failure-timeout} (60 s by
     * default), holds the change: no later phase is entered without it (every member must take each view and drain),
     * and the change is not rolled back either. Writes through every node, the frozen one included, go on around it;
     * after SIGCONT the join completes and every acknowledged write reads back at 2/3 through the joiner.
     */
    @Test
    void aMemberFrozenAcrossAPhaseChangeHoldsTheJoinAndNoAcknowledgedWriteIsLost() throws Exception {
        cluster = ProcessCluster.start(3, dir, JVM);
        Map<String, String> acknowledged = new ConcurrentHashMap<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        List<Thread> writers = new ArrayList<>();
        for (int node = 0; node < 3; node++) {
            int coordinator = cluster.url(node).getPort();
            String prefix = "w" + node + "-";
            Thread writer = new Thread(() -> {
                for (int i = 0; writing.get(); i++) {
                    try {
                        HttpResponse<Void> put = http.send(HttpRequest.newBuilder(V0Uri.entity(coordinator, prefix + i))
                                        .timeout(Duration.ofSeconds(30)).PUT(HttpRequest.BodyPublishers.ofString("v" + i))
                                        .build(), HttpResponse.BodyHandlers.discarding());
                        if (put.statusCode() == 201) {
                            acknowledged.put(prefix + i, "v" + i);
                        }
                    } catch (Exception e) {
                        // not acknowledged: nothing to check
                    }
                }
            }, "writer-" + node);
            writer.start();
            writers.add(writer);
        }
        await().atMost(CHANGE_TIME).until(() -> acknowledged.size() > 300);

        int port = NodeProcess.freePort();
        joiner = NodeProcess.start(port, dir.resolve("data-frozen-joiner").toAbsolutePath(), dir.resolve("joiner.log"),
                JVM, "--dht.self=http://localhost:" + port, "--dht.nodes=" + cluster.url(0),
                "--dht.cluster-secret=" + cluster.secret(), "--dht.stream-rate=200");
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() ->
                view(cluster.url(0)).path("change").path("phase").asText().equals("streaming"));
        signal("-STOP", cluster.node(1).pid());
        try {
            Thread.sleep(8_000);
            JsonNode frozen = view(cluster.url(0));
            assertThat(frozen.get("change").isNull()).as("the join waits for the frozen member: %s", frozen).isFalse();
            assertThat(frozen.path("change").path("phase").asText()).as("no rollback for a short pause: %s", frozen)
                    .isIn("streaming", "write-both-read-new");
        } finally {
            signal("-CONT", cluster.node(1).pid());
        }
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            JsonNode view = view(cluster.url(0));
            assertThat(view.get("members").size()).isEqualTo(4);
            assertThat(view.get("change").isNull()).as("join done: %s", view).isTrue();
        });
        writing.set(false);
        for (Thread writer : writers) {
            writer.join();
        }
        for (Map.Entry<String, String> entry : acknowledged.entrySet()) {
            HttpResponse<String> read = http.send(HttpRequest.newBuilder(V0Uri.raw(port,
                    "/v0/entity?id=" + entry.getKey() + "&replicas=2/3")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(read.statusCode()).as("%s through the joiner", entry.getKey()).isEqualTo(200);
            assertThat(read.body()).isEqualTo(entry.getValue());
        }
    }

    private static void signal(String signal, long pid) throws Exception {
        assertThat(new ProcessBuilder("kill", signal, Long.toString(pid)).start().waitFor()).isZero();
    }

    /** {@link #KEYS} values of 1 000 bytes at 2/3, 16 requests in flight; a 503 (overload) is sent again. */
    private void load() throws Exception {
        Semaphore inFlight = new Semaphore(16);
        List<CompletableFuture<Integer>> sent = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            inFlight.acquire();
            sent.add(put(i, 20).whenComplete((status, error) -> inFlight.release()));
        }
        for (CompletableFuture<Integer> status : sent) {
            assertThat(status.get()).isEqualTo(201);
        }
    }

    private CompletableFuture<Integer> put(int i, int triesLeft) {
        int node = cluster.url(i % 3).getPort();
        return http.sendAsync(HttpRequest.newBuilder(V0Uri.entity(node, key(i)))
                        .PUT(HttpRequest.BodyPublishers.ofString(value(i))).build(), HttpResponse.BodyHandlers.discarding())
                .thenCompose(response -> response.statusCode() == 503 && triesLeft > 0
                        ? CompletableFuture.supplyAsync(() -> null,
                                CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS))
                                .thenCompose(ignored -> put(i, triesLeft - 1))
                        : CompletableFuture.completedFuture(response.statusCode()));
    }

    private NodeProcess startJoiner(int port, String run) throws Exception {
        return NodeProcess.start(port, dir.resolve("data-joiner").toAbsolutePath(), dir.resolve("joiner-" + run + ".log"),
                JVM, "--dht.self=http://localhost:" + port, "--dht.nodes=" + cluster.url(0),
                "--dht.cluster-secret=" + cluster.secret(), "--dht.stream-rate=2000");
    }

    private double streamed(URI node) {
        try {
            String metrics = http.send(HttpRequest.newBuilder(node.resolve("/actuator/prometheus")).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher matcher = STREAMED.matcher(metrics);
            return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
        } catch (Exception e) {
            return 0;
        }
    }

    private JsonNode view(URI node) throws Exception {
        return json.readTree(http.send(HttpRequest.newBuilder(node.resolve("/actuator/cluster")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    private static String key(int i) {
        return "j-" + i;
    }

    private static String value(int i) {
        return ("value-" + i + "-").repeat(1000).substring(0, 1000);
    }
}
