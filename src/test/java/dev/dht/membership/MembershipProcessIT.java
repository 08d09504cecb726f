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
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
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
    /** Keys each writer writes before the load, the last {@link #COLD} of which the load then leaves alone. */
    private static final int PRELOAD = 400;
    private static final int COLD = 100;
    /** New keys each writer adds during the load, at most. */
    private static final int FRESH = 400;
    private static final int WRITE_PAUSE_MS = 15;
    private static final int READ_PAUSE_MS = 8;
    private static final int READERS = 3;

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
        try (Load load = new Load(three)) {
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
            List<KeyLog> cold = load.keys.stream().filter(key -> key.cold).toList();
            awaitOwnersOnly(admin, cold, fourMembers, four);
            long gained = cold.stream().filter(key -> Placement.contains(fourMembers.newReplicas(
                    key.id.getBytes(StandardCharsets.UTF_8), key.from()), fourthUrl)).count();
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
            // the leaver drives its decommission and takes the last view after the claimant; until then it coordinates
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

            System.out.printf("join %d ms, decommission %d ms; writes acknowledged %d, reads checked %d, 503s %s,"
                            + " 504s %d (1/1 and 3/3), keys %d, cold keys gained by the 4th %d of %d%n", joinMillis,
                    leaveMillis, load.acknowledged.sum(), load.readsChecked.sum(), load.overloaded, load.timeouts.sum(),
                    load.keys.size(), gained, cold.size());
            assertThat(load.failureCount.get()).as("2/3 requests that failed, reads older than an acknowledged write,"
                    + " unexpected answers: %s", load.failures).isZero();
            assertThat(load.acknowledged.sum()).as("writes acknowledged during the load").isGreaterThan(500);
            assertThat(load.readsChecked.sum()).as("reads checked during the load").isGreaterThan(1000);

            assertEveryWriteReadable(load.keys, three);
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
            assertThat(send("PUT", cluster.url(i % 3).getPort(), "z-" + i, "2/3", "v" + i).statusCode())
                    .as("PUT z-%d", i).isEqualTo(201);
        }

        URI fourthUrl = startFourth(jvm);
        admin.awaitMembers(cluster.url(0), 4, CHANGE_TIME);
        List<URI> four = List.of(cluster.url(0), cluster.url(1), cluster.url(2), fourthUrl);
        admin.awaitSettled(four, CHANGE_TIME);
        for (int i = 0; i < keys; i++) {
            assertThat(send("DELETE", four.get(i % 4).getPort(), "z-" + i, "2/3", null).statusCode())
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
                            HttpResponse<String> read = send("GET", node.getPort(), id, replicas, null);
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

    /** A request of the v0 API at {@code replicas}; a 503 (overload) is sent again, up to 20 times. */
    private HttpResponse<String> send(String method, int port, String id, String replicas, String value)
            throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(V0Uri.raw(port, "/v0/entity?id=" + V0Uri.percentEncode(id)
                        + "&replicas=" + replicas)).timeout(Duration.ofSeconds(30))
                .method(method, value == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(value)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        for (int tries = 0; response.statusCode() == 503 && tries < 20; tries++) {
            Thread.sleep(100);
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        return response;
    }

    /** Every key read once at its own replicas, through {@code nodes} in turn: what was acknowledged or newer. */
    private void assertEveryWriteReadable(List<KeyLog> keys, List<URI> nodes) throws Exception {
        ExecutorService readers = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> checked = new ArrayList<>();
            for (int n = 0; n < keys.size(); n++) {
                KeyLog key = keys.get(n);
                int port = nodes.get(n % nodes.size()).getPort();
                checked.add(readers.submit(() -> {
                    int acknowledged = key.acknowledged();
                    HttpResponse<String> read = send("GET", port, key.id, key.replicas, null);
                    return read.statusCode() == 200 || read.statusCode() == 404
                            ? key.check(acknowledged, read.statusCode() == 200 ? key.version(read.body()) : -1)
                            : key.id + " at " + key.replicas + ": " + read.statusCode() + " " + read.body();
                }));
            }
            List<String> lost = new ArrayList<>();
            for (Future<String> result : checked) {
                if (result.get() != null) {
                    lost.add(result.get());
                }
            }
            assertThat(lost.size()).as("acknowledged writes not read back, of %d keys; the first: %s", keys.size(),
                    lost.subList(0, Math.min(20, lost.size()))).isZero();
        } finally {
            readers.shutdownNow();
        }
    }

    /**
     * Waits until each key of {@code keys} that had a write acknowledged is stored on exactly its replicas under
     * {@code placement} among {@code nodes} (its {@code from} of them, 1 or 3), all holding its newest record, which
     * is what was acknowledged last or newer.
     */
    private static void awaitOwnersOnly(ClusterAdmin admin, List<KeyLog> keys, Placement placement, List<URI> nodes) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            List<Map<String, Record>> stores = new ArrayList<>();
            for (URI node : nodes) {
                stores.add(admin.localRecords(node, "n", "q"));
            }
            List<String> wrong = new ArrayList<>();
            for (KeyLog key : keys) {
                if (key.acknowledged() == 0) {
                    continue;
                }
                List<URI> owners = placement.newReplicas(key.id.getBytes(StandardCharsets.UTF_8), key.from()).stream()
                        .map(Node::url).toList();
                List<URI> holders = new ArrayList<>();
                Record newest = null;
                for (int i = 0; i < nodes.size(); i++) {
                    Record record = stores.get(i).get(key.id);
                    if (record != null) {
                        holders.add(nodes.get(i));
                        newest = newest == null || record.timestamp() > newest.timestamp() ? record : newest;
                    }
                }
                if (!new TreeSet<>(holders).equals(new TreeSet<>(owners))) {
                    wrong.add(key.id + " (" + key.replicas + ") on " + holders + ", replicas " + owners);
                    continue;
                }
                for (int i = 0; i < nodes.size(); i++) {
                    Record record = stores.get(i).get(key.id);
                    if (record != null && record.timestamp() != newest.timestamp()) {
                        wrong.add(key.id + " on " + nodes.get(i) + " is older than on another replica");
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

    /**
     * What one key was written, by its only writer: a version number per write or delete, in order; which of them
     * are deletes; and the latest one acknowledged. A read is correct if it returns the latest version acknowledged
     * before it started, or any later one.
     */
    private static final class KeyLog {
        final String id;
        final String replicas;
        final boolean cold;
        private final BitSet deletes = new BitSet();
        private int issued;
        private volatile int acknowledged;

        KeyLog(String id, String replicas, boolean cold) {
            this.id = id;
            this.replicas = replicas;
            this.cold = cold;
        }

        int from() {
            return Integer.parseInt(replicas.substring(replicas.indexOf('/') + 1));
        }

        /** The next version, a delete or a value. */
        synchronized int issue(boolean delete) {
            issued++;
            deletes.set(issued, delete);
            return issued;
        }

        synchronized void acknowledge(int version) {
            acknowledged = Math.max(acknowledged, version);
        }

        int acknowledged() {
            return acknowledged;
        }

        String value(int version) {
            return id + "#" + version + "#" + "x".repeat(40);
        }

        /** The version of a value read, or -2 if the value is not one of this key's. */
        int version(String value) {
            String[] parts = value.split("#");
            return parts.length == 3 && parts[0].equals(id) && parts[1].matches("[0-9]{1,9}")
                    ? Integer.parseInt(parts[1]) : -2;
        }

        /**
         * Null if a read that started once {@code acknowledgedBefore} was the latest acknowledged version may return
         * {@code read} (a version, or -1 for absent), else what is wrong.
         */
        synchronized String check(int acknowledgedBefore, int read) {
            boolean ok;
            if (read == -1) {
                int laterDelete = deletes.nextSetBit(Math.max(acknowledgedBefore, 1));
                ok = acknowledgedBefore == 0 || (laterDelete != -1 && laterDelete <= issued);
            } else {
                ok = read >= acknowledgedBefore && read >= 1 && read <= issued && !deletes.get(read);
            }
            if (ok) {
                return null;
            }
            return id + " (" + replicas + ") read " + (read == -1 ? "absent" : "version " + read)
                    + " after version " + acknowledgedBefore + (deletes.get(acknowledgedBefore) ? " (a delete)" : "")
                    + " was acknowledged; " + issued + " issued";
        }
    }

    /**
     * Continuous load: a writer per original node, each the only writer of its keys ({@code pW-*} preloaded,
     * {@code nW-*} added as it goes) and sending through its own node, so that each key's writes are ordered; readers
     * through every node of {@link #readThrough} check each read against what was acknowledged before it started.
     * One key in six is written at 1/1, one at 3/3, the others at 2/3; reads of a key use its writes' setting.
     */
    private final class Load implements AutoCloseable {
        final List<KeyLog> keys = new CopyOnWriteArrayList<>();
        final LongAdder acknowledged = new LongAdder();
        final LongAdder readsChecked = new LongAdder();
        /** 504s at 1/1 and 3/3 (those at 2/3 are failures). */
        final LongAdder timeouts = new LongAdder();
        /** 503s by {@code X-Dht-Overload-Reason}. */
        final Map<String, AtomicInteger> overloaded = new ConcurrentHashMap<>();
        /** The first failures (a 504 or no answer at 2/3, a stale read, an unexpected status), and how many in all. */
        final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        final AtomicInteger failureCount = new AtomicInteger();
        private final List<URI> writeThrough;
        private final List<List<KeyLog>> writable = new ArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> threads = new ArrayList<>();
        private volatile List<URI> readThrough;

        Load(List<URI> nodes) {
            this.writeThrough = nodes;
            this.readThrough = nodes;
            for (int w = 0; w < nodes.size(); w++) {
                writable.add(new ArrayList<>());
            }
        }

        void readThrough(List<URI> nodes) {
            readThrough = nodes;
        }

        /** {@link #PRELOAD} keys per writer, one in ten deleted again, every write acknowledged (503s sent again). */
        void preload() throws Exception {
            List<Future<?>> done = new ArrayList<>();
            ExecutorService preloaders = Executors.newFixedThreadPool(writeThrough.size());
            try {
                for (int w = 0; w < writeThrough.size(); w++) {
                    int writer = w;
                    done.add(preloaders.submit(() -> {
                        for (int i = 0; i < PRELOAD; i++) {
                            KeyLog key = new KeyLog("p" + writer + "-" + i, replicasOf(i), i >= PRELOAD - COLD);
                            put(key, writer, false);
                            if (i % 10 == 5) {
                                put(key, writer, true);
                            }
                            keys.add(key);
                            if (!key.cold) {
                                writable.get(writer).add(key);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> writer : done) {
                    writer.get();
                }
            } finally {
                preloaders.shutdownNow();
            }
        }

        private void put(KeyLog key, int writer, boolean delete) throws IOException, InterruptedException {
            int version = key.issue(delete);
            HttpResponse<String> response = send(delete ? "DELETE" : "PUT", writeThrough.get(writer).getPort(), key.id,
                    key.replicas, delete ? null : key.value(version));
            assertThat(response.statusCode()).as("preload %s of %s: %s", delete ? "DELETE" : "PUT", key.id,
                    response.body()).isEqualTo(delete ? 202 : 201);
            key.acknowledge(version);
        }

        void start() {
            for (int w = 0; w < writeThrough.size(); w++) {
                int writer = w;
                threads.add(new Thread(() -> write(writer), "writer-" + w));
            }
            for (int r = 0; r < READERS; r++) {
                threads.add(new Thread(this::read, "reader-" + r));
            }
            for (Thread thread : threads) {
                thread.setDaemon(true);
                thread.setUncaughtExceptionHandler((dead, e) -> fail(dead.getName() + " died: " + e));
                thread.start();
            }
        }

        /** Stops the load and waits for its requests to end. */
        void stop() throws InterruptedException {
            running.set(false);
            for (Thread thread : threads) {
                thread.join();
            }
        }

        @Override
        public void close() {
            try {
                stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void fail(String failure) {
            if (failureCount.incrementAndGet() <= 50) {
                failures.add(failure);
            }
        }

        private void write(int writer) {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            List<KeyLog> own = writable.get(writer);
            int fresh = 0;
            while (running.get()) {
                int dice = random.nextInt(100);
                KeyLog key;
                boolean delete = false;
                if (dice < 10 && fresh < FRESH) {
                    key = new KeyLog("n" + writer + "-" + fresh, replicasOf(fresh), false);
                    fresh++;
                    own.add(key);
                    keys.add(key);
                } else {
                    key = own.get(random.nextInt(own.size()));
                    delete = dice < 35;
                }
                int version = key.issue(delete);
                Answer answer = call(delete ? "DELETE" : "PUT", writeThrough.get(writer).getPort(), key,
                        delete ? null : key.value(version));
                if (answer.status() == (delete ? 202 : 201)) {
                    key.acknowledge(version);
                    acknowledged.increment();
                } else {
                    unexpected(answer, key, delete ? "DELETE" : "PUT");
                }
                pause(WRITE_PAUSE_MS);
            }
        }

        private void read() {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (running.get()) {
                KeyLog key = keys.get(random.nextInt(keys.size()));
                int before = key.acknowledged();
                if (before == 0) {
                    continue;
                }
                List<URI> nodes = readThrough;
                Answer answer = call("GET", nodes.get(random.nextInt(nodes.size())).getPort(), key, null);
                if (answer.status() == 200 || answer.status() == 404) {
                    String stale = key.check(before, answer.status() == 200 ? key.version(answer.body()) : -1);
                    if (stale != null) {
                        fail("stale read through " + answer.node() + ": " + stale);
                    }
                    readsChecked.increment();
                } else {
                    unexpected(answer, key, "GET");
                }
                pause(READ_PAUSE_MS);
            }
        }

        /**
         * An answer that is not the success expected: a 503 (counted in {@link #overloaded}) or a 504 at 1/1 or 3/3
         * (counted) is tolerated; anything else (a 504 at 2/3, no answer, another status) is a failure.
         */
        private void unexpected(Answer answer, KeyLog key, String method) {
            if (answer.status() == 503) {
                return;
            }
            if (answer.status() == 504 && !key.replicas.equals("2/3")) {
                timeouts.increment();
                return;
            }
            fail(method + " " + key.id + " at " + key.replicas + " through " + answer.node() + ": "
                    + (answer.status() == -1 ? "no answer, " : answer.status() + " ") + answer.body());
        }

        private Answer call(String method, int port, KeyLog key, String value) {
            URI uri = V0Uri.raw(port, "/v0/entity?id=" + key.id + "&replicas=" + key.replicas);
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                        .method(method, value == null ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(value)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 503) {
                    String reason = response.headers().firstValue("X-Dht-Overload-Reason").orElse("none");
                    overloaded.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
                }
                return new Answer(response.statusCode(), response.body(), port);
            } catch (IOException e) {
                return new Answer(-1, e.toString(), port);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Answer(-1, e.toString(), port);
            }
        }

        private static void pause(int millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private record Answer(int status, String body, int node) {
    }

    private static String replicasOf(int i) {
        return i % 6 == 0 ? "1/1" : i % 6 == 1 ? "3/3" : "2/3";
    }
}
