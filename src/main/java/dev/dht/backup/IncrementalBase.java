package dev.dht.backup;

import dev.dht.backup.format.BackupManifest;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;

/**
 * What an incremental backup is taken against: its base (the newest done backup at the location, full or itself
 * incremental) and its snapshot point {@code since}, the base's start minus {@code dht.backup.incremental-margin};
 * or, where no incremental is safe, the reason the backup is full instead. Pure: no I/O, no clock of its own.
 *
 * <p>Why the margin: a member's part of the base holds what its snapshot held, and the snapshot was taken after the
 * base started. A write acknowledged after that whose copies all reached their replicas after their snapshots was
 * stamped at most a replica timeout before it reached them, by a coordinator whose clock may differ from the base's
 * coordinator's by the clocks' skew. Records stamped at or after {@code since} are in the incremental, so the margin
 * has to cover the replica timeout plus the skew: an incremental may repeat records, it never misses one that way.
 *
 * <p>Why the grace: tombstones (and expired values) older than {@code dht.tombstone.gc-grace} are purged from the
 * members' stores. A delete stamped after {@code since} whose tombstone is purged before the incremental's snapshot
 * would be missing from the chain, and the restore would bring back the base's older value. So {@code since} must be
 * later than now minus the grace, by a margin again (the members' snapshots are taken after now); an older base
 * makes the backup full, with {@link #fullReason} saying so.
 *
 * @param base       the base, or null when the backup is full
 * @param since      the snapshot point: records stamped at this instant or later are in the incremental; null when
 *                   full
 * @param fullReason why the backup is full although an incremental one was asked; null when incremental
 */
public record IncrementalBase(BackupManifest base, Instant since, String fullReason) {

    /**
     * The base of an incremental backup started at {@code now} at a location holding {@code backups}, or a full
     * backup and why.
     *
     * @param backups every backup at the location, in any order (only done ones may be a base)
     * @param margin  {@code dht.backup.incremental-margin}: at least the replica timeout plus the clocks' skew
     * @param gcGrace {@code dht.tombstone.gc-grace}: how long the members keep tombstones
     */
    public static IncrementalBase choose(List<BackupManifest> backups, Instant now, Duration margin, Duration gcGrace) {
        Optional<BackupManifest> newest = backups.stream()
                .filter(manifest -> BackupManifest.DONE.equals(manifest.state()))
                .max(java.util.Comparator.comparing(BackupManifest::id));
        if (newest.isEmpty()) {
            return new IncrementalBase(null, null, "no done backup at the location to be incremental to");
        }
        BackupManifest base = newest.get();
        Instant started;
        try {
            started = Instant.parse(base.startedAt());
        } catch (DateTimeParseException | NullPointerException e) {
            return new IncrementalBase(null, null, "the last done backup " + base.id() + " has no readable start time");
        }
        Instant since = started.minus(margin);
        Instant oldestTombstoneKept = now.minus(gcGrace).plus(margin);
        if (!since.isAfter(oldestTombstoneKept)) {
            return new IncrementalBase(null, null, "the last done backup " + base.id() + " started at " + started
                    + ", longer than dht.tombstone.gc-grace (" + gcGrace + ") minus twice dht.backup.incremental-margin ("
                    + margin + ") ago: tombstones of deletes since then may be purged, so an incremental could miss"
                    + " them");
        }
        return new IncrementalBase(base, since, null);
    }

    /** Whether the backup is incremental. */
    public boolean incremental() {
        return base != null;
    }
}
