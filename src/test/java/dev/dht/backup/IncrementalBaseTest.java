package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An incremental backup's base is the newest done backup, its snapshot point that backup's start less the margin;
 * with no done backup, or one so old that tombstones written since may be purged, the backup is full and says why.
 * An incremental's id sorts after its base's (retention and the choice of a base go by id).
 */
class IncrementalBaseTest {
    private static final Duration MARGIN = Duration.ofMinutes(1);
    private static final Duration GRACE = Duration.ofDays(10);

    @Test
    void theNewestDoneBackupIsTheBaseAndItsStartLessTheMarginTheSnapshotPoint() {
        List<BackupManifest> backups = List.of(
                manifest("20261128T020000Z-0001", BackupManifest.DONE, "2026-11-28T02:00:00Z"),
                manifest("20261129T020000Z-0002", BackupManifest.DONE, "2026-11-29T02:00:00Z"),
                manifest("20261129T030000Z-0003", BackupManifest.FAILED, "2026-11-29T03:00:00Z"),
                manifest("20261129T040000Z-0004", BackupManifest.RUNNING, "2026-11-29T04:00:00Z"));

        IncrementalBase base = IncrementalBase.choose(backups, Instant.parse("2026-11-29T05:00:00Z"), MARGIN, GRACE);

        assertThat(base.incremental()).isTrue();
        assertThat(base.base().id()).isEqualTo("20261129T020000Z-0002");
        assertThat(base.since()).isEqualTo(Instant.parse("2026-11-29T01:59:00Z"));
        assertThat(base.fullReason()).isNull();
    }

    @Test
    void noDoneBackupMakesAFullOne() {
        IncrementalBase base = IncrementalBase.choose(
                List.of(manifest("20261129T030000Z-0003", BackupManifest.FAILED, "2026-11-29T03:00:00Z")),
                Instant.parse("2026-11-29T05:00:00Z"), MARGIN, GRACE);

        assertThat(base.incremental()).isFalse();
        assertThat(base.fullReason()).contains("no done backup");
    }

    @Test
    void aBaseOlderThanTheTombstoneGraceMakesAFullOne() {
        List<BackupManifest> backups = List.of(manifest("20261119T000000Z-0001", BackupManifest.DONE,
                "2026-11-19T00:00:00Z"));

        IncrementalBase justInside = IncrementalBase.choose(backups, Instant.parse("2026-11-28T23:57:00Z"), MARGIN,
                GRACE);
        IncrementalBase tooOld = IncrementalBase.choose(backups, Instant.parse("2026-11-28T23:58:00Z"), MARGIN, GRACE);

        assertThat(justInside.incremental()).as("9 days 23:57 after a base, grace 10 days, margin 1 min").isTrue();
        assertThat(tooOld.incremental()).as("9 days 23:58 after: within twice the margin of the grace").isFalse();
        assertThat(tooOld.fullReason()).contains("20261119T000000Z-0001").contains("dht.tombstone.gc-grace");
    }

    @Test
    void anIncrementalsIdSortsAfterItsBaseAlsoWithinTheSameSecond() {
        assertThat(BackupCoordinator.idAfter("20261129T094017Z-0001", "20261129T094016Z-8eb9"))
                .isEqualTo("20261129T094017Z-0001");
        assertThat(BackupCoordinator.idAfter("20261129T094016Z-36e4", "20261129T094016Z-8eb9"))
                .isEqualTo("20261129T094016Z-8eba");
        assertThat(BackupCoordinator.idAfter("20261129T094015Z-ffff", "20261129T094016Z-8eb9"))
                .as("the base's coordinator's clock ahead").isEqualTo("20261129T094016Z-8eba");
        assertThat(BackupCoordinator.idAfter("20261129T235959Z-0000", "20261129T235959Z-ffff"))
                .isEqualTo("20261130T000000Z-0000");
    }

    static BackupManifest manifest(String id, String state, String startedAt) {
        return new BackupManifest(BackupFileFormat.VERSION, id, state, null, startedAt, null, 1, 3,
                List.of("http://a:8080"), List.of(), List.of());
    }
}
