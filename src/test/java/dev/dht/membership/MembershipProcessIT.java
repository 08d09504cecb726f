package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.storage.Record;
import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.HistoryLoad;
import dev.dht.testing.KeyHistory;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import dev.dht.testing.V0Uri;
import java.io.IOException;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.util.FileSystemUtils;

/**
 * Adding a node to a running cluster and taking it out again, over real node processes as an operator does it: the
 * 4th node is started with an empty data dir and the first node as its seed (it joins by itself), and leaves on
 * {@code POST /actuator/cluster/decommission}. Clients that keep writing, deleting and reading through the nodes
 * meanwhile lose nothing that was acknowledged and never read anything older than what was acknowledged before their
 * read; afterwards each key is held by exactly its replicas; and a key deleted while the 4th node was a member does
 * not come back after it left, unless cleanup is turned off.
 */
class MembershipProcessIT {
    private static final Duration CHANGE_TIME = Duration.ofMinutes(3);
    private static final List<String> JVM = List.of("-Xmx256m");
    /** Tombstones collected a second after they are written, hints kept no longer; no scheduled repair. */
    private static final List<String> FAST_GC = List.of("-Ddht.tombstone.gc-grace=1s",
            "-Ddht.tombstone.gc-interval=1s", "-Ddht.hints.window=1s", "-Ddht.repair.interval=0s");
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();

    @TempDir
    Path dir;

    @AutoClose
    private ProcessCluster cluster;

    @AutoClose
    private NodeProcess fourth;

    /**
     * A 4th node joins a 3-node cluster and is then decommissioned while clients write, delete and read through every
     * node, most keys at 2/3 and some at 1/1 and 3/3: no acknowledged write or delete is lost, no read returns
     * anything older than what was acknowledged before it started, no 2/3 request times out (504), the node that left
     * turns clients away and is not ready, and once cleanup is done each key's newest record is on exactly its
     * replicas and on no other node (with four members for the keys the load leaves alone, and with three again for
     * every key).
     */
    @Test
    void aNodeJoinsAndLeavesUnderLoadWithNoAcknowledgedWriteLostAndNoStaleRead() throws Exception {
        cluster = ProcessCluster.start(3, dir, JVM);
        ClusterAdmin admin = new ClusterAdmin(cluster.secret());
        List<URI> three = List.of(cluster.url(0), cluster.url(1), cluster.url(2));
        try (HistoryLoad load = new HistoryLoad("", three)) {
            load.preload();
            load.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> load.acknowledged.sum() > 200);

            URI fourthUrl = startFourth(JVM);
            long joinStart = System.nanoTime();
            JsonNode joined = admin.awaitMembers(cluster.url(0), 4, CHANGE_TIME);
            List<URI> four = List.of(cluster.url(0), cluster.url(1), cluster.url(2), fourthUrl);
            admin.awaitSettled(four, CHANGE_TIME);
            long joinMillis = (System.nanoTime() - joinStart) / 1_000_000;
            load.readThrough(four);

            // the keys the load leaves alone are, after the join's cleanup, on exactly their replicas among the four
            Placement fourMembers = ClusterAdmin.placement(joined);
            List<KeyHistory> cold = load.keys.stream().filter(KeyHistory::cold).toList();
            awaitOwnersOnly(admin, cold, fourMembers, four);
            long gained = cold.stream().filter(key -> Placement.contains(fourMembers.newReplicas(
                    key.id().getBytes(StandardCharsets.UTF_8), key.from()), fourthUrl)).count();
            assertThat(gained).as("keys the 4th node replicates, of %d", cold.size()).isPositive();
            long readsBefore = load.readsChecked.sum();
            await().atMost(Duration.ofSeconds(60)).until(() -> load.readsChecked.sum() > readsBefore + 300);

            load.readThrough(three);
            Thread.sleep(500); // reads through the 4th still in flight end
            HttpResponse<String> decommission = admin.post(fourthUrl, "/actuator/cluster/decommission");
            assertThat(decommission.statusCode()).as(decommission.body()).isEqualTo(202);
            long leaveStart = System.nanoTime();
            JsonNode left = admin.awaitMembers(cluster.url(0), 3, CHANGE_TIME);
            long leaveMillis = (System.nanoTime() - leaveStart) / 1_000_000;
            assertThat(left.get("members").findValuesAsText("node")).doesNotContain(fourthUrl.toString());
            // the log's leader tells the leaver the final view (it is no member of it) once the members took it;
            // until then the leaver still coordinates
            admin.awaitMembers(fourthUrl, 3, CHANGE_TIME);

            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(fourthUrl.resolve("/v0/entity?id=p0-1"))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).as("a node that left serves no client: %s", refused.body()).isEqualTo(503);
            assertThat(refused.body()).contains("has left");
            HttpResponse<String> readiness = http.send(HttpRequest.newBuilder(fourthUrl.resolve(
                    "/actuator/health/readiness")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(readiness.statusCode()).as(readiness.body()).isEqualTo(503);
            assertThat(json.readTree(readiness.body()).get("status").asText()).isEqualTo("DOWN");

            admin.awaitSettled(three, CHANGE_TIME);
            load.stop();
            stopFourthAndEmptyItsDataDir();

            System.out.printf("join %d ms, decommission %d ms; cold keys gained by the 4th %d of %d%n", joinMillis,
                    leaveMillis, gained, cold.size());
            load.assertNoFailures("join and decommission");
            assertThat(load.acknowledged.sum()).as("writes acknowledged during the load").isGreaterThan(500);
            assertThat(load.readsChecked.sum()).as("reads checked during the load").isGreaterThan(1000);

            load.assertEveryWriteReadable(three, null);
            Placement threeMembers = ClusterAdmin.placement(admin.view(cluster.url(0)));
            awaitOwnersOnly(admin, load.keys, threeMembers, three);
        }
    }

    /**
     * Keys written on three nodes, a 4th node joins, the keys are deleted, their tombstones are collected (a 1 s
     * gc-grace) and the 4th node is decommissioned: with cleanup (the default) no deleted key comes back, read at 1/1,
     * 2/3 or 3/3 through any node or in a range; with {@code dht.cleanup=false} a node that kept its copies of the
     * keys the 4th took over brings some of them back, the failure cleanup exists to prevent.
     */
    @ParameterizedTest(name = "cleanup {0}")
    @ValueSource(booleans = {true, false})
    void aKeyDeletedWhileTheFourthNodeWasAMemberComesBackAfterItLeftOnlyWithoutCleanup(boolean cleanup)
            throws Exception {
        List<String> jvm = new ArrayList<>(JVM);
        jvm.addAll(FAST_GC);
        jvm.add("-Ddht.cleanup=" + cleanup);
        cluster = ProcessCluster.start(3, dir, jvm);
        ClusterAdmin admin = new ClusterAdmin(cluster.secret());
        List<URI> three = List.of(cluster.url(0), cluster.url(1), cluster.url(2));
        int keys = 200;
        for (int i = 0; i < keys; i++) {
            assertThat(HistoryLoad.send("PUT", cluster.url(i % 3), "z-" + i, "2/3", "v" + i).statusCode())
                    .as("PUT z-%d", i).isEqualTo(201);
        }

        URI fourthUrl = startFourth(jvm);
        admin.awaitMembers(cluster.url(0), 4, CHANGE_TIME);
        List<URI> four = List.of(cluster.url(0), cluster.url(1), cluster.url(2), fourthUrl);
        admin.awaitSettled(four, CHANGE_TIME);
        for (int i = 0; i < keys; i++) {
            assertThat(HistoryLoad.send("DELETE", four.get(i % 4), "z-" + i, "2/3", null).statusCode())
                    .as("DELETE z-%d", i).isEqualTo(202);
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            for (URI node : four) {
                assertThat(admin.localRecords(node, "z-", "z.").values()).as("tombstones on %s", node)
                        .noneMatch(Record::isTombstone);
            }
        });

        HttpResponse<String> decommission = admin.post(fourthUrl, "/actuator/cluster/decommission");
        assertThat(decommission.statusCode()).as(decommission.body()).isEqualTo(202);
        admin.awaitMembers(cluster.url(0), 3, CHANGE_TIME);
        admin.awaitSettled(three, CHANGE_TIME);
        stopFourthAndEmptyItsDataDir();

        Set<String> back = new TreeSet<>();
        ExecutorService readers = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> reads = new ArrayList<>();
            for (URI node : three) {
                for (String replicas : List.of("1/1", "2/3", "3/3")) {
                    for (int i = 0; i < keys; i++) {
                        String id = "z-" + i;
                        reads.add(readers.submit(() -> {
                            HttpResponse<String> read = HistoryLoad.send("GET", node, id, replicas, null);
                            assertThat(read.statusCode()).as("GET %s at %s through %s", id, replicas, node)
                                    .isIn(200, 404);
                            return read.statusCode() == 200 ? id + " at " + replicas + " through " + node : null;
                        }));
                    }
                }
            }
            for (Future<String> read : reads) {
                if (read.get() != null) {
                    back.add(read.get());
                }
            }
        } finally {
            readers.shutdownNow();
        }
        for (URI node : three) {
            for (byte[] chunk : ChunkedResponseReader.chunksOf(V0Uri.entities(node.getPort(), "z-", "z."))) {
                String entry = new String(chunk, StandardCharsets.UTF_8);
                back.add(entry.substring(0, entry.indexOf('\n')) + " in the range through " + node);
            }
        }
        System.out.printf("cleanup %s: %d reads of deleted keys found a value%n", cleanup, back.size());
        if (cleanup) {
            assertThat(back).as("deleted keys that came back").isEmpty();
            for (URI node : three) {
                assertThat(admin.localRecords(node, "z-", "z.")).as("records of deleted keys on %s", node).isEmpty();
            }
        } else {
            assertThat(back).as("without cleanup, a former replica brings deleted keys back").isNotEmpty();
        }
    }

    /** Starts a 4th node with an empty data dir and node 0 as its seed, so that it joins by itself; its URL. */
    private URI startFourth(List<String> jvm) throws IOException {
        int port = NodeProcess.freePort();
        URI url = URI.create("http://localhost:" + port);
        fourth = NodeProcess.start(port, dir.resolve("data-fourth").toAbsolutePath(), dir.resolve("fourth.log"), jvm,
                "--dht.self=" + url, "--dht.nodes=" + cluster.url(0), "--dht.cluster-secret=" + cluster.secret());
        return url;
    }

    /** Stops the 4th node (SIGTERM) once it has left, and deletes its data dir. */
    private void stopFourthAndEmptyItsDataDir() throws IOException, InterruptedException {
        fourth.terminate(Duration.ofSeconds(30));
        assertThat(FileSystemUtils.deleteRecursively(dir.resolve("data-fourth"))).isTrue();
    }

    /**
     * Waits until each key of {@code keys} that had a write acknowledged is stored on exactly its replicas under
     * {@code placement} among {@code nodes} (its {@code from} of them, 1 or 3), all holding its newest record, which
     * is what was acknowledged last or newer.
     */
    private static void awaitOwnersOnly(ClusterAdmin admin, List<KeyHistory> keys, Placement placement,
                                        List<URI> nodes) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<Map<String, Record>> stores = new ArrayList<>();
            for (URI node : nodes) {
                stores.add(admin.localRecords(node, "n", "q"));
            }
            List<String> wrong = new ArrayList<>();
            for (KeyHistory key : keys) {
                if (key.acknowledged() == 0) {
                    continue;
                }
                List<URI> owners = placement.newReplicas(key.id().getBytes(StandardCharsets.UTF_8), key.from()).stream()
                        .map(Node::url).toList();
                List<URI> holders = new ArrayList<>();
                Record newest = null;
                for (int i = 0; i < nodes.size(); i++) {
                    Record record = stores.get(i).get(key.id());
                    if (record != null) {
                        holders.add(nodes.get(i));
                        newest = newest == null || record.timestamp() > newest.timestamp() ? record : newest;
                    }
                }
                if (!new TreeSet<>(holders).equals(new TreeSet<>(owners))) {
                    wrong.add(key.id() + " (" + key.replicas() + ") on " + holders + ", replicas " + owners);
                    continue;
                }
                for (int i = 0; i < nodes.size(); i++) {
                    Record record = stores.get(i).get(key.id());
                    if (record != null && record.timestamp() != newest.timestamp()) {
                        wrong.add(key.id() + " on " + nodes.get(i) + " is older than on another replica");
                    }
                }
                String stale = key.check(key.acknowledged(), newest.isTombstone() ? -1
                        : key.version(new String(newest.value(), StandardCharsets.UTF_8)));
                if (stale != null) {
                    wrong.add("newest stored record of " + stale);
                }
            }
            assertThat(wrong.size()).as("keys not on exactly their replicas, of %d; the first: %s", keys.size(),
                    wrong.subList(0, Math.min(20, wrong.size()))).isZero();
        });
    }
}
