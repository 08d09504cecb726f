package dev.dht.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.InProcessCluster;
import dev.dht.testing.NodeProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Each command of {@code dht} against a live 3-node cluster (one for the class), run as the operator would, through
 * {@link Dht#run}: its exit status, stdout and stderr. The tests that stop a member run last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DhtCommandLineTest {
    private static final Path BACKUPS = temporaryDirectory();
    @RegisterExtension
    static final InProcessCluster CLUSTER = InProcessCluster.of(3, Map.of(
            "dht.backup.location", "file:" + BACKUPS, "dht.repair.interval", "0"));
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** What a command printed and its exit status. */
    record Run(int status, String out, String err, long millis) {
        JsonNode json() {
            return JSON.readTree(out);
        }
    }

    private static Run dht(Map<String, String> environment, String... args) {
        return dhtIn(BACKUPS, environment, args);
    }

    /** {@code dht ARGS} run in {@code workingDir} with {@code environment}. */
    private static Run dhtIn(Path workingDir, Map<String, String> environment, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long start = System.nanoTime();
        int status = Dht.run(args, new CliContext(environment, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false, workingDir));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
                (System.nanoTime() - start) / 1_000_000);
    }

    /** {@code dht ARGS --host NODE-0} with the cluster's secret in {@code DHT_CLUSTER_SECRET}. */
    private static Run dht(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--host=" + CLUSTER.url(0));
        return dht(Map.of("DHT_CLUSTER_SECRET", InProcessCluster.SECRET), all.toArray(String[]::new));
    }

    @Test
    @Order(1)
    void anUnknownCommandOrOptionExits2WithTheUsage() {
        Run unknown = dht(Map.of(), "stauts");
        assertThat(unknown.status()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unmatched argument").contains("Usage: dht");
        Run badOption = dht(Map.of(), "status", "--hots=http://localhost:1");
        assertThat(badOption.status()).isEqualTo(2);
        assertThat(badOption.err()).contains("--hots").contains("Usage: dht status");
        assertThat(Dht.isCommand(new String[] {"stauts"})).isTrue();
        assertThat(Dht.isCommand(new String[] {"--server.port=8081", "--dht.self=http://h:8081"})).isFalse();
        assertThat(Dht.isCommand(new String[0])).isFalse();
    }

    @Test
    @Order(2)
    void statusShowsEveryMemberUpWithItsFiguresAndTheViewLogRoles() {
        Run table = dht("status");
        assertThat(table.status()).as(table.err()).isZero();
        assertThat(table.out()).contains("replication factor 3").contains("change: none")
                .containsPattern("(?m)^UP +STATE +NODE +RECORDS +BYTES +OWNS +HINTS +ROLE$");
        for (int i = 0; i < 3; i++) {
            assertThat(table.out()).containsPattern("(?m)^UP +NORMAL +" + CLUSTER.url(i) + " ");
        }

        Run json = dht("status", "--output", "json");
        assertThat(json.status()).isZero();
        JsonNode status = json.json();
        assertThat(status.path("replicationFactor").asInt()).isEqualTo(3);
        assertThat(status.path("change").isNull()).isTrue();
        assertThat(status.path("members")).hasSize(3);
        int leaders = 0;
        for (JsonNode member : status.path("members")) {
            assertThat(member.path("up").asBoolean()).isTrue();
            assertThat(member.path("state").asString()).isEqualTo("NORMAL");
            assertThat(member.path("records").isNumber()).isTrue();
            assertThat(member.path("bytes").asLong()).isPositive();
            assertThat(member.path("ownership").asDouble()).isEqualTo(1.0); // 3 replicas of every key on 3 nodes
            assertThat(member.path("hints").asLong()).isZero();
            assertThat(member.path("role").asString()).isIn("leader", "voter");
            leaders += member.path("role").asString().equals("leader") ? 1 : 0;
        }
        assertThat(leaders).isEqualTo(1);
        assertThat(status.path("leader").asString()).isNotEmpty();
    }

    @Test
    @Order(3)
    void aWrongSecretExits2Saying403() {
        Run run = dht(Map.of("DHT_CLUSTER_SECRET", "not-the-secret"), "abort", "--host=" + CLUSTER.url(0));
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.err()).contains("403").contains("the cluster secret is wrong");
    }

    @Test
    @Order(4)
    void anUnreachableHostExits1InUnder5Seconds() throws IOException {
        int closed = NodeProcess.freePorts(1).get(0);
        Run refused = dht(Map.of(), "status", "--host=http://localhost:" + closed);
        assertThat(refused.status()).isEqualTo(1);
        assertThat(refused.err()).contains("cannot reach http://localhost:" + closed);
        assertThat(refused.millis()).isLessThan(5_000);
        // an address no host answers from (TEST-NET-1, RFC 5737): the connect timeout, not the OS's
        Run silent = dht(Map.of(), "status", "--host=http://192.0.2.1:8080");
        assertThat(silent.status()).isEqualTo(1);
        assertThat(silent.millis()).isLessThan(5_000);
    }

    @Test
    @Order(5)
    void backupStartWaitThenListShowsItDone() {
        CLUSTER.client(0).put("dht-cli-backup-key", "value", "3/3");
        Run start = dht("backup", "start", "--wait");
        assertThat(start.status()).as(start.err()).isZero();
        String[] lines = start.out().strip().split("\n");
        String id = lines[lines.length - 1];
        assertThat(id).matches("[A-Za-z0-9][A-Za-z0-9_-]*");

        Run list = dht("backup", "list", "--output", "json");
        assertThat(list.status()).isZero();
        JsonNode backups = list.json();
        assertThat(backups.isArray()).isTrue();
        assertThat(backups.valueStream().filter(backup -> backup.path("id").asString().equals(id)))
                .singleElement().satisfies(backup -> assertThat(backup.path("state").asString()).isEqualTo("done"));
        Run table = dht("backup", "list");
        assertThat(table.out()).containsPattern("(?m)^" + id + " +done ");

        Run status = dht("backup", "status", id);
        assertThat(status.status()).isZero();
        assertThat(status.out()).contains("backup " + id + ": done");

        Run incremental = dht("backup", "start", "--incremental", "--wait");
        assertThat(incremental.status()).as(incremental.err()).isZero();
        assertThat(incremental.err()).contains("started, incremental to " + id);
        String[] incrementalLines = incremental.out().strip().split("\n");
        String incrementalId = incrementalLines[incrementalLines.length - 1];
        assertThat(dht("backup", "list").out()).as("the chain: the incremental's base")
                .containsPattern("(?m)^" + incrementalId + " +done +" + id + " ");
        Run baseDelete = dht("backup", "delete", id);
        assertThat(baseDelete.status()).as("deleting the base an incremental needs").isEqualTo(2);
        assertThat(baseDelete.err()).contains("409").contains("base of incremental backup " + incrementalId);
        assertThat(dht("backup", "delete", incrementalId).status()).isZero();

        Run deleted = dht("backup", "delete", id);
        assertThat(deleted.status()).as(deleted.err()).isZero();
        Run gone = dht("backup", "status", id);
        assertThat(gone.status()).isEqualTo(2);
        assertThat(gone.err()).contains("404");
    }

    @Test
    @Order(6)
    void repairAllRepairsEveryMemberInTurn() {
        Run run = dht("repair", "--all");
        assertThat(run.status()).as(run.err()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(run.out()).contains("repairing " + CLUSTER.url(i));
        }
    }

    @Test
    @Order(9)
    void verifyAndRestoreOfABackupWithAFlippedByteExit3NamingFileAndBlock() throws IOException {
        CLUSTER.client(0).put("dht-cli-corrupt-key", "value", "3/3");
        Run start = dht("backup", "start", "--wait");
        assertThat(start.status()).as(start.err()).isZero();
        String[] lines = start.out().strip().split("\n");
        String id = lines[lines.length - 1];
        Path file;
        try (Stream<Path> files = Files.list(BACKUPS.resolve(id))) {
            file = files.filter(path -> path.toString().endsWith(".dhtb")).sorted().findFirst().orElseThrow();
        }
        byte[] flipped = Files.readAllBytes(file);
        flipped[40] ^= 0x10;
        Files.write(file, flipped);

        Run verify = dht(Map.of(), "verify", "--from", "file:" + BACKUPS, "--backup", id);
        Run restore = dht("restore", "--from", "file:" + BACKUPS, "--backup", id,
                "--checkpoint", BACKUPS.resolve("flipped.checkpoint").toString());

        String name = id + "/" + file.getFileName();
        assertThat(verify.status()).as(verify.err()).isEqualTo(3);
        assertThat(verify.err()).contains(name + " block 0: checksum mismatch");
        assertThat(restore.status()).as(restore.err()).isEqualTo(3);
        assertThat(restore.err()).contains(name + " block 0");
        assertThat(dht("backup", "delete", id).status()).isZero();
    }

    @Test
    @Order(7)
    void abortWithNoChangeInProgressExits2WithTheReason() {
        Run run = dht("abort");
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.err()).contains("409");
    }

    @Test
    @Order(8)
    void theSecretOfALocalClusterIsFoundInItsDataDirectory() throws IOException {
        Path workingDir = Files.createTempDirectory("dht-cli-local-");
        int basePort = CLUSTER.url(0).getPort();
        Path file = LocalClusterSecret.file(workingDir, basePort);
        assertThat(LocalClusterSecret.file(workingDir, 8080)).isEqualTo(workingDir.resolve("data/cluster-secret"));
        assertThat(file).isEqualTo(workingDir.resolve("data/cluster-secret-" + basePort));
        Files.createDirectories(file.getParent());
        Files.writeString(file, InProcessCluster.SECRET + "\n");

        // asked through another member, with no secret given: the secret is found, so the node answers the abort
        // itself (409: no change runs) instead of refusing it (403)
        Run run = dhtIn(workingDir, Map.of(), "abort", "--host=" + CLUSTER.url(1));
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.err()).contains("409").doesNotContain("403");
        Run without = dhtIn(BACKUPS, Map.of(), "abort", "--host=" + CLUSTER.url(1));
        assertThat(without.err()).contains("403").contains("no cluster secret given");
    }

    @Test
    @Order(90)
    void aDeadMemberOfAnIdleClusterIsShownDownWithin10SecondsAndADecommissionIsRefused() {
        CLUSTER.stop(2);
        long stopped = System.nanoTime();
        Run status = dht("status");
        assertThat(status.status()).isZero();
        assertThat(status.out()).containsPattern("(?m)^DOWN +NORMAL +" + CLUSTER.url(2) + " ");
        assertThat((System.nanoTime() - stopped) / 1_000_000).isLessThan(10_000);

        Run decommission = dht("decommission", "--node", CLUSTER.url(1).toString());
        assertThat(decommission.status()).isEqualTo(2);
        assertThat(decommission.err()).contains("409").contains(CLUSTER.url(2).getHost());
    }

    @Test
    @Order(91)
    void removenodeWaitRemovesTheDeadMember() {
        CLUSTER.stop(2);
        Run run = dht("removenode", CLUSTER.url(2).toString(), "--wait");
        assertThat(run.status()).as(run.err()).isZero();
        assertThat(run.out()).contains("removenode of " + CLUSTER.url(2) + " completed");
        JsonNode status = dht("status", "--output", "json").json();
        assertThat(status.path("members").valueStream().map(member -> member.path("node").asString()))
                .containsExactly(CLUSTER.url(0).toString(), CLUSTER.url(1).toString());
    }

    private static Path temporaryDirectory() {
        try {
            Path dir = Files.createTempDirectory("dht-cli-backups-");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
