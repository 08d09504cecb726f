package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.storage.Record;
import dev.dht.testing.Backups;
import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.DhtClient;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole path with the packaged jar: a 3-node cluster holding 50 000 keys (values, deletes, TTLs, writes at 1/1
 * and at the default 2/3) backs up to a directory under a steady write load; the {@code restore} command, run as a
 * process of its own, restores it into a fresh 5-node cluster, is killed with {@code kill -9} mid-way and run again:
 * it resumes from its checkpoint, and then every write acknowledged before the backup reads back at 2/3 in its
 * version (writes at 1/1 too: a restore places every record on at least the target's replication factor of
 * replicas), every delete stays deleted, expired values are absent, and each key is on exactly its replicas.
 */
class BackupRestoreIT {
    private static final int KEYS = 50_000;
    private static final List<String> JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-Ddht.replica-timeout=5s");

    @TempDir
    Path root;

    @Test
    void fiftyThousandKeysBackedUpUnderLoadRestoreIntoFiveNodesAfterAKilledRestoreResumes() throws Exception {
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
