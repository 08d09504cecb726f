package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.location.FileBackupLocation;
import dev.dht.testing.Backups;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup's life across the nodes of a 3-node cluster whose backups are slowed to 1 KB/s per member (about 6 s
 * each): a backup whose request was cancelled before its answer still runs, shows each member's part on another
 * node, cannot be deleted there while it runs, and frees its coordinator for the next once it ends; a running
 * manifest whose coordinator stopped an hour ago reads as failed and is pruned (keep 1) by the next completed backups; a
 * member restarted in the middle of its part is tried again and the backup completes.
 */
class BackupLifecycleTest {
    private static final Duration BACKUP_TIMEOUT = Duration.ofMinutes(2);
    /** Keys written: about 6 KB of records on each member, a part of about 6 s at 1 KB/s. */
    private static final int KEYS = 100;

    @TempDir
    static Path root;
    private static InProcessCluster cluster;

    @BeforeAll
    static void start() {
        cluster = InProcessCluster.start(3, root.resolve("cluster"), Map.of(
                "dht.backup.location", "file:" + backups(), "dht.backup.rate", "1KB",
                "dht.backup.retry-window", "120s", "dht.backup.keep", "1",
                // backup threads at nice 0: on a machine saturated by others, nice 19 ones answer in minutes
                "dht.backup.nice", "0", "dht.replica-timeout", "10s", "dht.repair.interval", "0"));
        ConcurrentRequests.inParallel(KEYS, 8, i -> Backups.writeKey(cluster.client(i % 3), i));
    }

    /** Waits until no backup runs (another test's may still end). */
    @BeforeEach
    void noBackupRuns() {
        await().atMost(BACKUP_TIMEOUT).pollInterval(Duration.ofMillis(200))
                .until(() -> runningBackup(cluster.client(0)) == null);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Path backups() {
        return root.resolve("backups");
    }

    @Test
    void aCancelledRequestsBackupRunsShowsItsMembersEverywhereCannotBeDeletedAndEndsAStaleOne() {
        String dead = "20200101T000000Z-dead";
        new BackupCatalog(new FileBackupLocation(backups()), 7).write(new BackupManifest(BackupFileFormat.VERSION,
                dead, BackupManifest.RUNNING, null, "2020-01-01T00:00:00Z", null, 1, 3,
                List.of(cluster.url(0).toString()), List.of(), List.of()));
        JsonNode stale = Backups.get(cluster.client(1), dead);

        cluster.bean(0, BackupCoordinator.class).start(false, false).subscribe().dispose();
        String id = await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> runningBackup(cluster.client(1)), found -> found != null);
        JsonNode elsewhere = Backups.get(cluster.client(1), id);
        HttpResponse<byte[]> deleteElsewhere = cluster.client(1).admin("DELETE", "/actuator/backups/" + id, null,
                InProcessCluster.SECRET);
        JsonNode ended = Backups.awaitEnd(cluster.client(0), id, BACKUP_TIMEOUT);
        String next = Backups.start(cluster.client(0), false);
        Backups.awaitEnd(cluster.client(0), next, BACKUP_TIMEOUT);

        assertThat(stale.get("state").asText()).as("%s", stale).isEqualTo("failed");
        assertThat(stale.get("error").asText()).contains("stopped before the backup ended");
        assertThat(elsewhere.get("state").asText()).isEqualTo("running");
        assertThat(elsewhere.get("coordinator").asText()).isEqualTo(cluster.url(0).toString());
        assertThat(elsewhere.get("members")).as("%s", elsewhere).hasSize(3)
                .allSatisfy(member -> assertThat(member.get("state").asText()).isIn("running", "done"));
        assertThat(elsewhere.get("progress").get("members").asInt()).isEqualTo(3);
        assertThat(deleteElsewhere.statusCode()).as("DELETE on another node while it runs").isEqualTo(409);
        assertThat(ended.get("state").asText()).as("%s", ended).isEqualTo("done");
        assertThat(ended.get("members")).allSatisfy(member -> {
            assertThat(member.get("state").asText()).isEqualTo("done");
            assertThat(member.get("records").asLong()).isPositive();
        });
        // retention runs once the second completed backup's manifest is written
        await("the stale backup pruned").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> Backups.get(cluster.client(1), dead) == null);
    }

    @Test
    void aMemberRestartedInTheMiddleOfItsPartIsTriedAgain() {
        String id = Backups.start(cluster.client(0), false);
        URI restarted = cluster.url(2);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> cluster.bean(2, MemberBackup.class).progress(id) > 0);
        cluster.stop(2);
        cluster.start(2);
        JsonNode backup = Backups.awaitEnd(cluster.client(0), id, BACKUP_TIMEOUT);

        assertThat(backup.get("state").asText()).as("%s", backup).isEqualTo("done");
        JsonNode member = StreamSupport.stream(backup.get("members").spliterator(), false)
                .filter(part -> part.get("node").asText().equals(restarted.toString())).findFirst().orElseThrow();
        assertThat(member.get("attempts").asInt()).as("%s", member).isGreaterThanOrEqualTo(2);
        assertThat(backup.get("nodes").get(restarted.toString()).asLong()).isPositive();
    }

    private static String runningBackup(DhtClient client) {
        for (JsonNode backup : Backups.list(client).get("backups")) {
            if ("running".equals(backup.get("state").asText())) {
                return backup.get("id").asText();
            }
        }
        return null;
    }
}
