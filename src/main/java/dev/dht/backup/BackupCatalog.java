package dev.dht.backup;

import dev.dht.backup.format.BackupCorruptException;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.location.BackupLocation;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backups at a location, read and written through their manifests: list, read one, write one, delete one, and
 * retention ({@code dht.backup.keep}: the newest completed backups are kept, older ones deleted, and failed ones
 * older than the oldest kept; the chain an incremental restores with is kept as long as the incremental is, and a
 * backup an incremental needs cannot be deleted). Ids sort by their start time. A running manifest whose coordinator stopped writing it
 * ({@link BackupManifest#isStale}) reads as failed, is written as failed by retention, and is then pruned as failed
 * ones are; one that is not stale cannot be deleted, wherever it runs. Blocking: every method does the location's
 * I/O.
 */
public final class BackupCatalog {
    private static final Logger LOG = LoggerFactory.getLogger(BackupCatalog.class);
    private final BackupLocation location;
    private final int keep;
    private final Clock clock;

    /** The catalog of {@code location}, keeping {@code keep} completed backups; {@code clock} tells stale manifests. */
    public BackupCatalog(BackupLocation location, int keep, Clock clock) {
        this.location = location;
        this.keep = keep;
        this.clock = clock;
    }

    /** The catalog of {@code location}, keeping {@code keep} completed backups, on the system clock. */
    public BackupCatalog(BackupLocation location, int keep) {
        this(location, keep, Clock.systemUTC());
    }

    /**
     * Every backup whose manifest reads, newest first, a stale running one as failed; one that does not read is
     * logged and left out.
     */
    public List<BackupManifest> list() {
        List<BackupManifest> manifests = new ArrayList<>();
        try {
            for (String id : location.backupIds()) {
                try {
                    read(id).ifPresent(manifests::add);
                } catch (BackupCorruptException e) {
                    LOG.warn("backup {} at {}: {}", id, location.describe(), e.getMessage());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + location.describe() + ": " + e.getMessage(), e);
        }
        manifests.sort(Comparator.comparing(BackupManifest::id).reversed());
        return manifests;
    }

    /**
     * The manifest of backup {@code id}, empty if there is none; a stale running one as failed (not written).
     *
     * @throws BackupCorruptException if it does not read
     */
    public Optional<BackupManifest> read(String id) {
        return readAsWritten(id).map(manifest -> manifest.isStale(clock.instant()) ? abandoned(manifest) : manifest);
    }

    /** {@code manifest}, running but stale, as failed. */
    private static BackupManifest abandoned(BackupManifest manifest) {
        String since = manifest.updatedAt() != null ? manifest.updatedAt() : manifest.startedAt();
        return manifest.ended(BackupManifest.FAILED, "the coordinator " + (manifest.coordinator() == null ? ""
                        : manifest.coordinator() + " ") + "stopped before the backup ended (its manifest was last"
                        + " written at " + since + ")", since, List.of(), List.of());
    }

    private Optional<BackupManifest> readAsWritten(String id) {
        try (InputStream in = location.open(id, BackupManifest.FILE_NAME)) {
            return Optional.of(BackupManifest.fromJson(id + "/" + BackupManifest.FILE_NAME, in.readAllBytes()));
        } catch (NoSuchFileException | IllegalArgumentException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read backup " + id + " at " + location.describe() + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Writes (or replaces) {@code manifest}. The new manifest appears only once all of it was written: a write that
     * fails abandons its stream ({@link BackupLocation#abort}) and leaves the previous manifest, if any, in place.
     *
     * @throws UncheckedIOException if the location cannot be written
     */
    public void write(BackupManifest manifest) {
        OutputStream out = null;
        try {
            out = location.create(manifest.id(), BackupManifest.FILE_NAME);
            out.write(manifest.toJson());
            OutputStream written = out;
            out = null;
            written.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the manifest of backup " + manifest.id() + " to "
                    + location.describe() + ": " + e.getMessage(), e);
        } finally {
            if (out != null) {
                location.abort(out);
            }
        }
    }

    /**
     * Deletes backup {@code id}; false if there was none.
     *
     * @throws BackupRefusedException if its manifest says running and is not stale (its coordinator, whichever node
     *                                it is, still writes it), or if it is the base of an incremental backup that is
     *                                done or runs (that one would no longer restore: delete it first)
     */
    public boolean delete(String id) {
        return delete(id, list());
    }

    private boolean delete(String id, List<BackupManifest> all) {
        Optional<BackupManifest> manifest = readAsWritten(id);
        if (manifest.isEmpty()) {
            return false;
        }
        if (BackupManifest.RUNNING.equals(manifest.get().state()) && !manifest.get().isStale(clock.instant())) {
            throw new BackupRefusedException("backup " + id + " is running"
                    + (manifest.get().coordinator() == null ? "" : " on " + manifest.get().coordinator()));
        }
        List<String> dependents = all.stream()
                .filter(other -> id.equals(other.base()) && !BackupManifest.FAILED.equals(other.state()))
                .map(BackupManifest::id)
                .toList();
        if (!dependents.isEmpty()) {
            throw new BackupRefusedException("backup " + id + " is the base of incremental backup "
                    + String.join(", ", dependents) + ", which restores only with it: delete that first");
        }
        try {
            location.delete(id);
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete backup " + id + " at " + location.describe() + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * Writes stale running manifests as failed; then deletes completed backups beyond the newest {@code keep}, and
     * failed ones older than the oldest kept, but never a backup in the chain of a kept or running incremental (its
     * base, the base's base...): those stay until no kept backup needs them. Deletes newest first, so that an
     * incremental goes before its base.
     */
    public void applyRetention() {
        List<BackupManifest> all = list();
        for (BackupManifest manifest : all) {
            if (BackupManifest.FAILED.equals(manifest.state()) && readAsWritten(manifest.id())
                    .filter(written -> BackupManifest.RUNNING.equals(written.state())).isPresent()) {
                LOG.warn("backup {}: failed: {}", manifest.id(), manifest.error());
                write(manifest);
            }
        }
        List<BackupManifest> done = all.stream().filter(m -> BackupManifest.DONE.equals(m.state())).toList();
        if (done.size() <= keep) {
            return;
        }
        String oldestKept = done.get(keep - 1).id();
        Set<String> needed = new HashSet<>();
        Map<String, BackupManifest> byId = new HashMap<>();
        all.forEach(manifest -> byId.put(manifest.id(), manifest));
        for (BackupManifest manifest : all) {
            boolean kept = BackupManifest.RUNNING.equals(manifest.state())
                    || BackupManifest.DONE.equals(manifest.state()) && manifest.id().compareTo(oldestKept) >= 0;
            for (BackupManifest link = manifest; kept && link != null && link.base() != null
                    && needed.add(link.base()); ) {
                link = byId.get(link.base());
            }
        }
        List<BackupManifest> remaining = new ArrayList<>(all);
        for (BackupManifest manifest : all) {
            boolean stale = manifest.id().compareTo(oldestKept) < 0 && !BackupManifest.RUNNING.equals(manifest.state())
                    && !needed.contains(manifest.id());
            if (stale) {
                LOG.info("backup {}: deleted ({}), beyond dht.backup.keep={}", manifest.id(), manifest.state(), keep);
                remaining.remove(manifest);
                delete(manifest.id(), remaining);
            }
        }
    }

    /** The location, for messages. */
    public String describe() {
        return location.describe();
    }
}
