package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupFileWriter;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.location.FileBackupLocation;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.peer.InternalProtocol;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import dev.dht.testing.Backups;
import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.DhtClient;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path with the packaged jar: a 3-node cluster holding 25 000 keys (values, deletes, TTLs, writes at 1/1
 * and at the default 2/3) backs up to a directory under a steady write load; the {@code restore} command, run as a
 * process of its own, restores it into a fresh 5-node cluster, is killed with {@code kill -9} mid-way and run again:
 * it resumes from its checkpoint, and then every write acknowledged before the backup reads back at 2/3 in its
 * version (writes at 1/1 too: a restore places every record on at least the target's replication factor of
 * replicas), every delete stays deleted, expired values are absent, and each key is on exactly its replicas. And
 * 300 values of 8 MB restore under a 256 MB heap.
 */
class BackupRestoreIT {
    /**
     * Enough for each member's part to span two blocks of its backup file (about 16 700 records in 1 MiB blocks of
     * about 11 000) and for the restore to be killed after 10 000 of its about 22 500 records.
     */
    private static final int KEYS = 25_000;
    private static final List<String> JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-Ddht.replica-timeout=5s");

    @TempDir
    Path root;

    @Test
    void twentyFiveThousandKeysBackedUpUnderLoadRestoreIntoFiveNodesAfterAKilledRestoreResumes() throws Exception {
        Path backups = root.resolve("backups");
        List<String> sourceJvm = List.of("-Xmx256m", "-XX:+UseSerialGC", "-Ddht.replica-timeout=5s",
                "-Ddht.backup.location=file:" + backups);
        try (ProcessCluster source = startCluster(3, root.resolve("source"), sourceJvm)) {
            DhtClient[] clients = {new DhtClient(source.url(0)), new DhtClient(source.url(1)), new DhtClient(source.url(2))};
            ConcurrentRequests.inParallel(KEYS, 8, i -> Backups.writeKey(clients[i % 3], i));
            AtomicBoolean loading = new AtomicBoolean(true);
            AtomicInteger loadWrites = new AtomicInteger();
            Thread load = new Thread(() -> {
                while (loading.get()) {
                    int n = loadWrites.incrementAndGet();
                    clients[n % 3].put("load-" + n, "during-backup", null);
                }
            });
            load.start();
            String id;
            JsonNode backup;
            try {
                id = adminStart(clients[0], source.secret());
                backup = Backups.awaitEnd(clients[0], id, Duration.ofMinutes(5));
            } finally {
                loading.set(false);
                load.join();
            }
            assertThat(backup.get("state").asText()).as("%s", backup).isEqualTo("done");
            assertThat(loadWrites.get()).isPositive();

            try (ProcessCluster target = startCluster(5, root.resolve("target"), JVM)) {
                Path checkpoint = root.resolve("restore.checkpoint");
                List<String> restore = List.of("restore", "--from", "file:" + backups, "--backup", id,
                        "--into", target.url(0) + "," + target.url(1), "--checkpoint", checkpoint.toString(),
                        "--rate", "5000");
                Process first = restoreProcess(restore, target.secret(), root.resolve("restore-1.log"));
                await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100))
                        .until(() -> acknowledged(checkpoint) >= 10_000);
                first.destroyForcibly();
                first.waitFor(30, TimeUnit.SECONDS);
                long before = acknowledged(checkpoint);

                Process second = restoreProcess(restore.subList(0, restore.size() - 2), target.secret(),
                        root.resolve("restore-2.log"));
                assertThat(second.waitFor(5, TimeUnit.MINUTES)).isTrue();
                String log = Files.readString(root.resolve("restore-2.log"));

                assertThat(before).as("killed mid-way").isLessThan(KEYS);
                assertThat(second.exitValue()).as(log).isZero();
                assertThat(log).contains("resuming backup " + id);
                assertThat(checkpoint).doesNotExist();
                DhtClient reader = new DhtClient(target.url(4));
                ConcurrentRequests.inParallel(KEYS, 8, i -> Backups.assertRestored(reader, i));
                assertStoredOnceOnTheirReplicas(target);
            }
        }
    }

    /**
     * Memory bounded in bytes: 300 values of 8 MB (2.4 GB, ten times the heap; each file block holds one) restore with
     * the packaged jar under {@code -Xmx256m} ({@code -Drestore.large-values=1000}: 8 GB, about 40 s more; see
     * gatling/results/2026-11-29-2325-restore-1000-large-values.md). The target is a stand-in that answers the internal protocol a restore uses (the view:
     * one node, replication factor 1; record writes counted and dropped), as 8 GB stored would take this machine
     * minutes; the values are a pattern, so the backup itself is small.
     */
    @Test
    void threeHundredValuesOfEightMegabytesRestoreUnderA256MegabyteHeap() throws Exception {
        int values = Integer.getInteger("restore.large-values", 300);
        int valueBytes = 8 << 20;
        Path backups = root.resolve("large-values");
        String id = "20261129T000000Z-8mb0";
        FileBackupLocation location = new FileBackupLocation(backups);
        byte[] value = new byte[valueBytes];
        for (int i = 0; i < valueBytes; i++) {
            value[i] = (byte) (i % 251);
        }
        BackupFileWriter writer = new BackupFileWriter("sink_1-0000.dhtb", location.create(id, "sink_1-0000.dhtb"));
        for (int i = 0; i < values; i++) {
            writer.write(new KeyedRecord(String.format("big-%04d", i).getBytes(StandardCharsets.UTF_8),
                    Record.value(1L << 16, value, 1, 0)));
        }
        BackupFileWriter.FileSummary file = writer.finish();
        new BackupCatalog(location, 1).write(new BackupManifest(BackupFileFormat.VERSION, id, BackupManifest.DONE,
                null, "2026-11-29T00:00:00Z", "2026-11-29T00:01:00Z", 1, 1, List.of("http://sink:1"),
                List.of(new BackupManifest.MemberPart("http://sink:1", values, file.bytes(), List.of(file))),
                List.of()));

        try (RecordSink sink = RecordSink.start()) {
            Path log = root.resolve("restore-large.log");
            Process restore = restoreProcess(List.of("restore", "--from", "file:" + backups, "--backup", id,
                    "--into", sink.url().toString(), "--checkpoint", root.resolve("large.checkpoint").toString()),
                    "sink-secret", log);
            boolean ended = restore.waitFor(10, TimeUnit.MINUTES);
            if (!ended) {
                restore.destroyForcibly();
            }
            String output = Files.readString(log);
            assertThat(ended).as("ended within 10 minutes: %s", output).isTrue();

            assertThat(restore.exitValue()).as(output).isZero();
            assertThat(output).contains("restored backup " + id + ": " + values + " records");
            assertThat(sink.bodyBytes()).as("bytes the target received").isGreaterThan((long) values * valueBytes);
        }
    }

    /**
     * A target cluster of one node, replication factor 1, that stores nothing: {@code GET /internal/cluster/view}
     * answers its view, record writes ({@code POST /internal/records}, {@code PUT /internal/record}) are read,
     * counted and answered 200.
     */
    private static final class RecordSink implements AutoCloseable {
        private final HttpServer server;
        private final AtomicLong bodyBytes = new AtomicLong();

        private RecordSink(HttpServer server) {
            this.server = server;
        }

        static RecordSink start() throws java.io.IOException {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
            RecordSink sink = new RecordSink(server);
            server.setExecutor(Executors.newFixedThreadPool(4));
            server.createContext("/", exchange -> {
                try (exchange) {
                    String path = exchange.getRequestURI().getPath();
                    byte[] answer = new byte[0];
                    if (path.equals(InternalProtocol.VIEW_PATH)) {
                        answer = ClusterViewFile.encode(new ClusterView(1, 1,
                                List.of(new Member(sink.url(), MemberState.NORMAL)))).getBytes(StandardCharsets.UTF_8);
                    } else {
                        sink.bodyBytes.addAndGet(exchange.getRequestBody().transferTo(OutputStream.nullOutputStream()));
                    }
                    exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
                    exchange.getResponseBody().write(answer);
                }
            });
            server.start();
            return sink;
        }

        URI url() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        }

        long bodyBytes() {
            return bodyBytes.get();
        }

        @Override
        public void close() {
            server.stop(0);
            ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        }
    }

    /**
     * A cluster of processes, started a second time (in a fresh directory) if a node received SIGTERM while it
     * started: on this shared machine a node was stopped so, twice, by no process of this test.
     */
    private static ProcessCluster startCluster(int size, Path dir, List<String> jvm) throws Exception {
        try {
            return ProcessCluster.start(size, dir, jvm);
        } catch (IllegalStateException e) {
            if (!String.valueOf(e.getMessage()).contains("exited with 143")) {
                throw e;
            }
            return ProcessCluster.start(size, dir.resolveSibling(dir.getFileName() + "-again"), jvm);
        }
    }

    /**
     * Each restored key is on exactly the target's replication factor of nodes (its 1/1 writes raised to it), each
     * once: the killed and resumed restore placed nothing twice nor elsewhere.
     */
    private static void assertStoredOnceOnTheirReplicas(ProcessCluster target) throws Exception {
        ClusterAdmin admin = new ClusterAdmin(target.secret());
        Map<String, Integer> copies = new HashMap<>();
        for (int node = 0; node < 5; node++) {
            for (Map.Entry<String, Record> entry : admin.localRecords(target.url(node), "key-", "key.").entrySet()) {
                copies.merge(entry.getKey(), 1, Integer::sum);
            }
        }
        for (int i = 0; i < KEYS; i++) {
            if (i % 10 == 1) {
                continue;
            }
            assertThat(copies.get("key-" + i)).as("copies of key-%d", i).isEqualTo(3);
        }
    }

    private static String adminStart(DhtClient client, String secret) {
        HttpResponse<byte[]> response = client.admin("/actuator/backup", null, secret);
        assertThat(response.statusCode()).isEqualTo(202);
        String body = new String(response.body(), StandardCharsets.UTF_8);
        return body.replaceAll(".*\"id\"\\s*:\\s*\"([^\"]+)\".*", "$1");
    }

    private static Process restoreProcess(List<String> args, String secret, Path log) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-jar",
                NodeProcess.jar().toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("DHT_CLUSTER_SECRET", secret);
        return builder.start();
    }

    /** Records the checkpoint says were acknowledged, 0 before it exists. */
    private static long acknowledged(Path checkpoint) {
        Properties properties = new Properties();
        try (var reader = Files.newBufferedReader(checkpoint)) {
            properties.load(reader);
        } catch (java.io.IOException e) {
            return 0;
        }
        return Long.parseLong(properties.getProperty("records", "0"));
    }
}
