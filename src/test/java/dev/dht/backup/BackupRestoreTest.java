package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.config.DhtProperties;
import dev.dht.storage.LocalStore;
import dev.dht.storage.StorageScheduler;
import dev.dht.testing.Backups;
import dev.dht.testing.Backups.RestoreRun;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import dev.dht.testing.LinuxThreads;
import dev.dht.testing.StorageThreadBlocker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.env.Environment;

/**
 * Cluster backups to a directory while a 3-node cluster serves, and restores with the {@code restore} command, all
 * with real nodes in this JVM: a backup taken under write load restores into a 5-node cluster (its actuator on a
 * management port of its own, which the restore does not need) with every write
 * acknowledged before it (values in their version, deletes deleted even over older values the target held, expired
 * values absent), its encoding done by threads at nice 19; a member down fails the backup naming it, unless
 * allowMissing, and
 * two of three down fail it even then; a flipped byte and a truncated file are refused by {@code --verify} and
 * {@code restore}; a restore into the source cluster keeps writes newer than the backup; a restore cut off resumes
 * from its checkpoint; an incremental backup after 1 % of the keys changed holds those changes alone, keeps its
 * base through retention, and restores with it (overwrites, deletes, additions) into a fresh cluster; a member whose
 * storage queue refuses its scan midway (503) has its part tried again, and that backup restores through a management
 * port; an incremental asked once its base is older than the tombstone grace is taken full, saying why, and restores
 * deletes whose tombstones were purged.
 */
class BackupRestoreTest {
    private static final Duration BACKUP_TIMEOUT = Duration.ofMinutes(2);
    private static final int KEYS = 2_000;

    @TempDir
    Path root;
    private InProcessCluster source;
    private InProcessCluster target;

    @AfterEach
    void close() {
        if (target != null) {
            target.close();
        }
        if (source != null) {
            source.close();
        }
    }

    private Path backups() {
        return root.resolve("backups");
    }

    private InProcessCluster startSource() {
        return startSource(Map.of());
    }

    /** The source cluster, with {@code more} settings. */
    private InProcessCluster startSource(Map<String, String> more) {
        // a member down fails a backup at once, not after a minute of attempts
        Map<String, String> settings = new java.util.HashMap<>(Map.of(
                "dht.backup.location", "file:" + backups(), "dht.replica-timeout", "10s", "dht.repair.interval", "0",
                "dht.backup.retry-window", "0s"));
        settings.putAll(more);
        source = InProcessCluster.start(3, root.resolve("source"), settings);
        return source;
    }

    /**
     * Starts the source cluster, writes {@code keys} keys ({@link #writeKeys}) and backs them up; returns the id of
     * the backup, which is done.
     */
    private String doneBackupOf(int keys) {
        startSource();
        writeKeys(source.client(0), keys);
        String id = Backups.start(source.client(0), false);
        assertThat(Backups.awaitEnd(source.client(0), id, BACKUP_TIMEOUT).get("state").asText()).isEqualTo("done");
        return id;
    }

    /** Keys {@code key-0} to {@code key-(count-1)} of {@link Backups#writeKey}, 8 at a time. */
    private static void writeKeys(DhtClient client, int count) {
        ConcurrentRequests.inParallel(count, 8, i -> Backups.writeKey(client, i));
    }

    /** Every key of {@link #writeKeys} reads as written at 2/3 (or absent if deleted or expired). */
    private static void assertRestored(DhtClient client, int count) {
        ConcurrentRequests.inParallel(count, 8, i -> Backups.assertRestored(client, i));
    }

    @Test
    void backupUnderWriteLoadRestoresIntoALargerCluster() throws Exception {
        // the actuator on a port of its own (random), as on Kubernetes: a restore needs only the API port
        target = InProcessCluster.start(5, root.resolve("target"), Map.of("dht.replica-timeout", "10s",
                "management.server.port", "0"));
        for (int i = 0; i < KEYS; i += 10) {
            String id = "key-" + i;
            await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO)
                    .until(() -> target.client(0).put(id, "stale", "3/3") == 201);
        }
        startSource();
        writeKeys(source.client(0), KEYS);
        long ttlOver = System.currentTimeMillis() + 1_000;
        AtomicBoolean loading = new AtomicBoolean(true);
        AtomicInteger loadWrites = new AtomicInteger();
        Thread load = new Thread(() -> {
            while (loading.get()) {
                int n = loadWrites.incrementAndGet();
                source.client(n % 3).put("load-" + n, "during-backup", null);
            }
        });
        load.start();
        String id;
        JsonNode backup;
        try {
            id = Backups.start(source.client(1), false);
            backup = Backups.awaitEnd(source.client(1), id, BACKUP_TIMEOUT);
        } finally {
            loading.set(false);
            load.join();
        }

        assertThat(backup.get("state").asText()).as("backup %s", backup).isEqualTo("done");
        assertThat(backup.get("nodes")).hasSize(3);
        assertThat(backup.get("records").asLong()).as("every copy of every key").isGreaterThan(KEYS);
        assertThat(loadWrites.get()).as("writes served during the backup").isPositive();
        JsonNode listed = Backups.list(source.client(2)).get("backups");
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).get("id").asText()).isEqualTo(id);
        String metrics = new String(source.client(0).send("GET", "/actuator/prometheus", new byte[0]).body(),
                StandardCharsets.UTF_8);
        assertThat(metrics).contains("dht_backup_records_total").contains("dht_backup_last_success_time");
        if (Files.isDirectory(Path.of("/proc/self/task"))) {
            List<String> backupThreads = LinuxThreads.idsNamed("dht-backup-");
            assertThat(backupThreads).as("the members' backup threads").isNotEmpty();
            for (String thread : backupThreads) {
                assertThat(LinuxThreads.niceOf(thread)).as("nice of backup thread %s", thread).isEqualTo(19);
            }
        }
        // every 1-s TTL started before writeKeys returned; on a fast machine the backup ends sooner than that
        await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > ttlOver);

        RestoreRun run = Backups.restore("--from", "file:" + backups(), "--backup", id,
                "--into", target.url(0) + "," + target.url(1));

        assertThat(run.status()).as("restore: %s %s", run.out(), run.err()).isZero();
        assertThat(run.out()).contains("expired values skipped");
        assertRestored(target.client(3), KEYS);
        assertThat(target.client(4).get("key-0", "3/3").statusCode()).as("stale value under a restored tombstone")
                .isEqualTo(404);
    }

    @Test
    void memberDownFailsTheBackupNamingItUnlessMissingIsAllowed() {
        startSource();
        writeKeys(source.client(0), 200);
        URI down = source.url(2);
        source.stop(2);

        JsonNode failed = Backups.awaitEnd(source.client(0), Backups.start(source.client(0), false), BACKUP_TIMEOUT);
        JsonNode allowed = Backups.awaitEnd(source.client(0), Backups.start(source.client(0), true), BACKUP_TIMEOUT);

        assertThat(failed.get("state").asText()).isEqualTo("failed");
        assertThat(failed.get("error").asText()).contains("member " + down + " failed");
        assertThat(allowed.get("state").asText()).as("%s", allowed).isEqualTo("done");
        assertThat(allowed.get("missing").get(0).asText()).isEqualTo(down.toString());
        RestoreRun refused = Backups.restore("--from", "file:" + backups(), "--backup", failed.get("id").asText(),
                "--verify");
        assertThat(refused.status()).isEqualTo(3);
        assertThat(refused.err()).contains("is failed");

        // two of three missing: a write acknowledged by 2 of its 3 replicas may be on those two alone
        source.stop(1);
        JsonNode twoMissing = Backups.awaitEnd(source.client(0), Backups.start(source.client(0), true), BACKUP_TIMEOUT);
        assertThat(twoMissing.get("state").asText()).as("%s", twoMissing).isEqualTo("failed");
        assertThat(twoMissing.get("error").asText()).contains("2 members missing, more than the 1");
    }

    @Test
    void flippedByteAndTruncatedFileAreRefusedNamingFileAndBlock() throws IOException {
        String id = doneBackupOf(KEYS);
        assertThat(Backups.restore("--from", "file:" + backups(), "--backup", id, "--verify").status()).isZero();
        Path file = memberFiles(id)[0];
        byte[] original = Files.readAllBytes(file);
        target = InProcessCluster.start(3, root.resolve("target"), Map.of("dht.replica-timeout", "10s"));

        byte[] flipped = original.clone();
        flipped[40] ^= 0x10;
        Files.write(file, flipped);
        RestoreRun verifyFlipped = Backups.restore("--from", "file:" + backups(), "--backup", id, "--verify");
        RestoreRun restoreFlipped = Backups.restore("--from", "file:" + backups(), "--backup", id,
                "--into", target.url(0).toString(), "--checkpoint", root.resolve("flipped.checkpoint").toString());
        HttpResponse<byte[]> afterFlipped = target.client(0).send("GET", "/v0/entities?start=a", new byte[0]);
        Files.write(file, java.util.Arrays.copyOf(original, original.length / 2));
        RestoreRun verifyTruncated = Backups.restore("--from", "file:" + backups(), "--backup", id, "--verify");
        RestoreRun restoreTruncated = Backups.restore("--from", "file:" + backups(), "--backup", id,
                "--into", target.url(0).toString(), "--checkpoint", root.resolve("cut.checkpoint").toString());

        String name = id + "/" + file.getFileName();
        assertThat(verifyFlipped.status()).isEqualTo(3);
        assertThat(verifyFlipped.err()).contains(name + " block 0: checksum mismatch");
        assertThat(restoreFlipped.status()).isEqualTo(3);
        assertThat(restoreFlipped.err()).contains(name + " block 0");
        assertThat(afterFlipped.statusCode()).isEqualTo(200);
        assertThat(afterFlipped.body()).as("records the refused restore wrote").isEmpty();
        assertThat(verifyTruncated.status()).isEqualTo(3);
        assertThat(verifyTruncated.err()).contains(name).contains("truncated");
        assertThat(restoreTruncated.status()).isEqualTo(3);
        assertThat(restoreTruncated.err()).contains(name).contains("truncated");
    }

    @Test
    void restoreIntoTheSameClusterKeepsNewerWrites() {
        String id = doneBackupOf(200);
        DhtClient client = source.client(0);
        assertThat(client.put("key-3", "newer", null)).isEqualTo(201);
        assertThat(client.delete("key-4", null)).isEqualTo(202);
        assertThat(client.put("key-10", "back after its delete", null)).isEqualTo(201);

        RestoreRun run = Backups.restore("--from", "file:" + backups(), "--backup", id, "--into", source.url(1).toString(),
                "--checkpoint", root.resolve("same.checkpoint").toString());

        assertThat(run.status()).as("%s %s", run.out(), run.err()).isZero();
        assertThat(new String(client.get("key-3", "3/3").body(), StandardCharsets.UTF_8)).isEqualTo("newer");
        assertThat(client.get("key-4", "3/3").statusCode()).isEqualTo(404);
        assertThat(new String(client.get("key-10", "3/3").body(), StandardCharsets.UTF_8))
                .isEqualTo("back after its delete");
        assertThat(new String(client.get("key-5", "2/3").body(), StandardCharsets.UTF_8)).isEqualTo(Backups.value(5));
    }

    @Test
    void restoreCutOffResumesFromItsCheckpoint() throws Exception {
        String id = doneBackupOf(KEYS);
        target = InProcessCluster.start(3, root.resolve("target"), Map.of("dht.replica-timeout", "2s"));
        Path checkpoint = root.resolve("resume.checkpoint");
        // at 300 records/s each batch of 512 waits 1.7 s for its turn before it is sent; the first one's checkpoint is
        // written once the second is sent (3.4 s in); then two of the three nodes refuse record writes at once, so a
        // later batch finds no majority after its retries and the restore is cut off with batches left
        Thread cut = new Thread(() -> {
            await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(20)).until(() -> Files.exists(checkpoint));
            target.serverFaults(1).refuseRecordWrites();
            target.serverFaults(2).refuseRecordWrites();
        });
        cut.start();

        RestoreRun first = Backups.restore("--from", "file:" + backups(), "--backup", id, "--into",
                target.url(0).toString(), "--rate", "300", "--checkpoint", checkpoint.toString());
        cut.join();
        target.serverFaults(1).clear();
        target.serverFaults(2).clear();
        RestoreRun second = Backups.restore("--from", "file:" + backups(), "--backup", id, "--into",
                target.url(0).toString(), "--checkpoint", checkpoint.toString());

        assertThat(first.status()).as("cut off: %s", first.out()).isEqualTo(3);
        assertThat(first.err()).contains("replicas acknowledged");
        assertThat(second.status()).as("%s %s", second.out(), second.err()).isZero();
        assertThat(second.out()).contains("resuming backup " + id);
        assertThat(checkpoint).doesNotExist();
        assertRestored(target.client(0), KEYS);
    }

    @Test
    void incrementalAfterOnePercentChangedHoldsOnlyTheChangesAndRestoresWithItsBase() throws Exception {
        // keep 1: retention must keep the full backup the kept incremental needs; a margin shorter than the pause
        // between the writes and the full backup, so that the incremental holds the changes alone
        startSource(Map.of("dht.backup.keep", "1", "dht.backup.incremental-margin", "200ms"));
        DhtClient client = source.client(0);
        int keys = 1_000;
        writeKeys(client, keys);
        long ttlOver = System.currentTimeMillis() + 1_000;
        Thread.sleep(300);
        String full = Backups.start(client, false);
        JsonNode fullDone = Backups.awaitEnd(client, full, BACKUP_TIMEOUT);
        assertThat(fullDone.get("state").asText()).isEqualTo("done");
        // about 1 % of the keys change: 5 overwritten, 4 deleted, 1 added, one deleted key written again
        List<Integer> overwritten = List.of(3, 13, 23, 33, 43);
        List<Integer> deleted = List.of(4, 14, 24, 34);
        for (int i : overwritten) {
            Backups.untilAnswered(() -> source.client(1).put("key-" + i, "changed-" + i, null), 201, "PUT key-" + i);
        }
        for (int i : deleted) {
            Backups.untilAnswered(() -> source.client(2).delete("key-" + i, null), 202, "DELETE key-" + i);
        }
        Backups.untilAnswered(() -> client.put("added", "new", null), 201, "PUT added");
        Backups.untilAnswered(() -> client.put("key-0", "revived", null), 201, "PUT key-0");

        JsonNode started = Backups.startIncremental(source.client(1));
        String incremental = started.get("id").asText();
        JsonNode incrementalDone = Backups.awaitEnd(client, incremental, BACKUP_TIMEOUT);

        assertThat(started.get("base").asText()).as("%s", started).isEqualTo(full);
        assertThat(incrementalDone.get("state").asText()).as("%s", incrementalDone).isEqualTo("done");
        assertThat(incrementalDone.get("base").asText()).isEqualTo(full);
        long fullRecords = fullDone.get("records").asLong();
        long changedRecords = incrementalDone.get("records").asLong();
        assertThat(changedRecords).as("records of the incremental (11 keys changed, up to 3 copies each) against the"
                + " full backup's %d", fullRecords).isBetween(11L, 33L);
        assertThat(incrementalDone.get("bytes").asLong()).as("bytes against the full backup's")
                .isLessThan(fullDone.get("bytes").asLong() / 10);
        JsonNode listed = Backups.list(source.client(2)).get("backups");
        assertThat(listed).as("dht.backup.keep=1 keeps the incremental and the base it needs: %s", listed).hasSize(2);
        assertThat(listed.get(0).get("base").asText()).isEqualTo(full);
        assertThat(listed.get(1).get("base").isNull()).isTrue();
        HttpResponse<byte[]> deleteBase = client.admin("DELETE", "/actuator/backups/" + full, null,
                InProcessCluster.SECRET);
        assertThat(deleteBase.statusCode()).as("DELETE of the base").isEqualTo(409);

        await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > ttlOver);
        target = InProcessCluster.start(3, root.resolve("target"), Map.of("dht.replica-timeout", "10s"));
        RestoreRun verify = Backups.restore("--from", "file:" + backups(), "--backup", incremental, "--verify");
        RestoreRun run = Backups.restore("--from", "file:" + backups(), "--backup", incremental,
                "--into", target.url(0).toString(), "--checkpoint", root.resolve("chain.checkpoint").toString());

        assertThat(verify.status()).as("%s %s", verify.out(), verify.err()).isZero();
        assertThat(verify.out()).contains((fullRecords + changedRecords) + " records");
        assertThat(run.status()).as("%s %s", run.out(), run.err()).isZero();
        assertThat(run.out()).contains("restoring its chain [" + full + ", " + incremental + "]");
        DhtClient restored = target.client(2);
        ConcurrentRequests.inParallel(keys, 8, i -> {
            if (overwritten.contains(i) || i == 0) {
                HttpResponse<byte[]> read = Backups.readUntilAnswered(restored, "key-" + i, "2/3");
                assertThat(read.statusCode()).as("key-%d", i).isEqualTo(200);
                assertThat(new String(read.body(), StandardCharsets.UTF_8)).as("key-%d", i)
                        .isEqualTo(i == 0 ? "revived" : "changed-" + i);
            } else if (deleted.contains(i)) {
                assertThat(Backups.readUntilAnswered(restored, "key-" + i, "2/3").statusCode())
                        .as("key-%d, deleted after the base", i).isEqualTo(404);
            } else {
                Backups.assertRestored(restored, i);
            }
        });
        HttpResponse<byte[]> added = Backups.readUntilAnswered(restored, "added", "2/3");
        assertThat(new String(added.body(), StandardCharsets.UTF_8)).as("a key added after the base").isEqualTo("new");
    }

    @Test
    void aMemberOverloadedInTheMiddleOfItsPartIsTriedAgainAndTheBackupRestoresThroughAManagementPort()
            throws InterruptedException {
        // paced so that a member's first batch of 256 records takes about 1.5 s to write: time to fill its storage
        // queue before its scan asks for the next batch; a retry window as by default
        startSource(Map.of("dht.backup.retry-window", "60s", "dht.backup.rate", "16KB"));
        int keys = 500;
        writeKeys(source.client(0), keys);
        URI overloaded = source.url(2);
        StorageScheduler storage = source.bean(2, LocalStore.class).scheduler();
        long rejectedBefore = storage.rejections();

        String id = Backups.start(source.client(0), false);
        await("node 2's part streaming").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                .until(() -> source.bean(2, MemberBackup.class).progress(id) > 0);
        StorageThreadBlocker blocker = new StorageThreadBlocker(storage);
        JsonNode retrying;
        try {
            for (int i = 0; i < source.bean(2, DhtProperties.class).storage().threads(); i++) {
                blocker.blockOneThread();
            }
            while (storage.queueDepth() < storage.queueCapacity()) {
                blocker.queueOneTask();
            }
            // the scan's next storage task is refused: its part fails with 503, which the coordinator tries again
            await("node 2's scan refused by its storage queue").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(5)).until(() -> storage.rejections() > rejectedBefore);
        } finally {
            blocker.release();
        }
        retrying = await("node 2's part retrying").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> part(Backups.get(source.client(0), id), overloaded),
                        part -> !"running".equals(part.get("state").asText()) || part.get("attempts").asInt() > 1);
        JsonNode backup = Backups.awaitEnd(source.client(0), id, BACKUP_TIMEOUT);

        assertThat(retrying.path("error").asText()).as("%s", retrying).contains("storage-queue-full (503)");
        assertThat(backup.get("state").asText()).as("%s", backup).isEqualTo("done");
        JsonNode member = part(backup, overloaded);
        assertThat(member.get("state").asText()).as("%s", member).isEqualTo("done");
        assertThat(member.get("attempts").asInt()).as("%s", member).isEqualTo(2);
        assertThat(backup.get("nodes").get(overloaded.toString()).asLong()).isGreaterThan(256);

        // a restore given only a management port (the actuator's, where Kubernetes serves it): it reads the view from
        // GET /actuator/cluster there, and writes to the members' API ports
        target = InProcessCluster.start(3, root.resolve("target"), Map.of("dht.replica-timeout", "10s",
                "management.server.port", "0"));
        URI management = URI.create("http://localhost:"
                + target.bean(0, Environment.class).getRequiredProperty("local.management.port"));
        RestoreRun run = Backups.restore("--from", "file:" + backups(), "--backup", id, "--into", management.toString(),
                "--checkpoint", root.resolve("management.checkpoint").toString());

        assertThat(run.status()).as("restore through %s: %s %s", management, run.out(), run.err()).isZero();
        assertRestored(target.client(1), keys);
    }

    @Test
    void incrementalWhoseBaseIsOlderThanTheTombstoneGraceIsTakenFullAndRestoresItsDeletes() {
        // tombstones purged 3 s after their delete (a pass every 500 ms): an incremental over a base older than
        // 3 s less twice the margin could miss a delete, so it is taken full
        startSource(Map.of("dht.tombstone.gc-grace", "3s", "dht.tombstone.gc-interval", "500ms",
                "dht.hints.window", "1s", "dht.backup.incremental-margin", "200ms"));
        DhtClient client = source.client(0);
        int keys = 200;
        writeKeys(client, keys);
        String base = Backups.start(client, false);
        assertThat(Backups.awaitEnd(client, base, BACKUP_TIMEOUT).get("state").asText()).isEqualTo("done");
        List<Integer> deleted = List.of(3, 13, 23);
        for (int i : deleted) {
            Backups.untilAnswered(() -> source.client(1).delete("key-" + i, null), 202, "DELETE key-" + i);
        }
        // the deletes' tombstones purged everywhere: an incremental over the base would hold nothing of them
        await("the tombstones purged").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> deleted.stream().allMatch(i -> java.util.stream.IntStream.range(0, source.size())
                        .allMatch(node -> source.storedAt(node, "key-" + i) == null)));

        JsonNode started = Backups.startIncremental(source.client(1));
        String id = started.get("id").asText();
        JsonNode done = Backups.awaitEnd(client, id, BACKUP_TIMEOUT);

        assertThat(started.path("fullReason").asText()).as("%s", started)
                .contains("the last done backup " + base).contains("dht.tombstone.gc-grace (PT3S)");
        assertThat(started.path("base").isMissingNode() || started.path("base").isNull()).as("%s", started).isTrue();
        assertThat(done.get("state").asText()).as("%s", done).isEqualTo("done");
        assertThat(done.get("base").isNull()).as("a full backup: %s", done).isTrue();
        assertThat(done.get("fullReason").asText()).isEqualTo(started.get("fullReason").asText());
        JsonNode listed = null;
        for (JsonNode backup : Backups.list(source.client(2)).get("backups")) {
            if (backup.get("id").asText().equals(id)) {
                listed = backup;
            }
        }
        assertThat(listed).as("backup %s listed", id).isNotNull();
        assertThat(listed.get("fullReason").asText()).isEqualTo(started.get("fullReason").asText());

        target = InProcessCluster.start(3, root.resolve("target"), Map.of("dht.replica-timeout", "10s"));
        RestoreRun run = Backups.restore("--from", "file:" + backups(), "--backup", id, "--into",
                target.url(0).toString(), "--checkpoint", root.resolve("grace.checkpoint").toString());

        assertThat(run.status()).as("%s %s", run.out(), run.err()).isZero();
        assertThat(run.out()).doesNotContain("restoring its chain");
        ConcurrentRequests.inParallel(keys, 8, i -> {
            if (deleted.contains(i)) {
                assertThat(Backups.readUntilAnswered(target.client(2), "key-" + i, "2/3").statusCode())
                        .as("key-%d, deleted after the base", i).isEqualTo(404);
            } else {
                Backups.assertRestored(target.client(2), i);
            }
        });
    }

    /** {@code member}'s part in {@code backup}'s {@code members}. */
    private static JsonNode part(JsonNode backup, URI member) {
        for (JsonNode part : backup.get("members")) {
            if (part.get("node").asText().equals(member.toString())) {
                return part;
            }
        }
        throw new AssertionError("no part of " + member + " in " + backup);
    }

    private Path[] memberFiles(String id) throws IOException {
        try (Stream<Path> files = Files.list(backups().resolve(id))) {
            return files.filter(path -> path.toString().endsWith(".dhtb")).sorted().toArray(Path[]::new);
        }
    }
}
