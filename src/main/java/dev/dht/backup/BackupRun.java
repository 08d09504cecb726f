package dev.dht.backup;

import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.format.BackupManifest.MemberPart;
import dev.dht.backup.format.BackupManifest.PartStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One backup while its coordinator runs it: each member's part as last seen (running, retrying, done, failed, with
 * its attempts), and the manifest writes of the run, which never overlap: the heartbeat's ({@link #writeIfRunning})
 * stop once {@link #end} returned, so the final manifest is the last one written. The parts' states are updated from
 * any thread (event loops included: never blocks for long); the writes block on the location's I/O and run on the
 * backup scheduler.
 */
final class BackupRun {
    private final BackupManifest manifest;
    private final Map<String, PartStatus> parts = new LinkedHashMap<>();
    private final Object writes = new Object();
    private boolean ended;

    /** The run of {@code manifest}, every member's part running, no attempt made yet. */
    BackupRun(BackupManifest manifest) {
        this.manifest = manifest;
        for (String member : manifest.members()) {
            parts.put(member, new PartStatus(member, BackupManifest.PART_RUNNING, 0, 0, 0, null));
        }
    }

    /** The manifest as first written. */
    BackupManifest manifest() {
        return manifest;
    }

    /** {@code member}'s part starts an attempt. */
    synchronized void attempt(String member) {
        PartStatus part = parts.get(member);
        parts.put(member, new PartStatus(member, BackupManifest.PART_RUNNING, 0, 0, part.attempts() + 1,
                part.error()));
    }

    /** {@code member}'s last attempt failed for {@code error}; another follows. */
    synchronized void retrying(String member, String error) {
        PartStatus part = parts.get(member);
        parts.put(member, new PartStatus(member, BackupManifest.PART_RETRYING, 0, 0, part.attempts(), error));
    }

    /** {@code member}'s part is written. */
    synchronized void done(String member, MemberPart done) {
        PartStatus part = parts.get(member);
        parts.put(member, new PartStatus(member, BackupManifest.DONE, done.records(), done.bytes(), part.attempts(),
                null));
    }

    /** {@code member}'s part failed for good. */
    synchronized void failed(String member, String error) {
        PartStatus part = parts.get(member);
        parts.put(member, new PartStatus(member, BackupManifest.FAILED, 0, 0, part.attempts(), error));
    }

    /**
     * Every member's part; {@code self}'s, while it runs, with {@code selfRecords} written so far (if not negative).
     */
    synchronized List<PartStatus> progress(String self, long selfRecords) {
        List<PartStatus> progress = new ArrayList<>();
        for (PartStatus part : parts.values()) {
            progress.add(part.node().equals(self) && selfRecords >= 0
                    && BackupManifest.PART_RUNNING.equals(part.state())
                    ? new PartStatus(part.node(), part.state(), selfRecords, 0, part.attempts(), part.error())
                    : part);
        }
        return progress;
    }

    /** Writes {@code heartbeat} through {@code catalog} unless the run ended; blocking. */
    void writeIfRunning(BackupCatalog catalog, BackupManifest heartbeat) {
        synchronized (writes) {
            if (!ended) {
                catalog.write(heartbeat);
            }
        }
    }

    /** Ends the run: waits for a heartbeat being written, and none is written after. Blocking. */
    void end() {
        synchronized (writes) {
            ended = true;
        }
    }
}
