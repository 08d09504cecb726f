package dev.dht.backup.restore;

import dev.dht.backup.format.BackupCorruptException;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.format.BackupManifest.MemberPart;
import dev.dht.backup.format.BackupFileWriter;
import dev.dht.backup.format.BackupFileWriter.FileSummary;
import dev.dht.backup.location.BackupLocation;
import dev.dht.pacing.Pacer;
import dev.dht.storage.KeyedRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reads one backup and verifies it, or restores it into a {@link TargetCluster}: the members' files merged into one
 * key-ordered stream with one record per key ({@link MergedRecords}), expired values skipped, written in batches of
 * up to {@value #BATCH_RECORDS} records or {@value #BATCH_BYTES} bytes of keys and values (a larger record alone)
 * with up to {@value #IN_FLIGHT} batches and {@value #IN_FLIGHT_BYTES} bytes in flight (at least one batch), paced,
 * and checkpointed in key order so that a restore stopped at any point resumes after the last batch acknowledged.
 * An incremental backup restores with its chain ({@link #chain}): the parts of every backup in it are merged as one
 * backup's, so the newest copy of each key wins whichever backup holds it, and a tombstone wins over the older
 * values the chain's earlier backups hold ({@link dev.dht.storage.Record#newest}: the order of the chain does not
 * matter). Memory, bounded in bytes whatever the values' sizes: the batches in flight, their encoded calls (one per
 * replica at a time) and one block per member file of the chain. Blocking: runs on the caller's thread, which also waits for the rate
 * ({@link Pacer#acquire}).
 */
final class Restore {
    static final int BATCH_RECORDS = 512;
    static final int BATCH_BYTES = 1 << 20;
    static final int IN_FLIGHT = 8;
    static final int IN_FLIGHT_BYTES = 16 << 20;
    private final BackupLocation location;
    private final String backupId;
    private final PrintStream out;
    private final boolean terminal;

    Restore(BackupLocation location, String backupId, PrintStream out, boolean terminal) {
        this.location = location;
        this.backupId = backupId;
        this.out = out;
        this.terminal = terminal;
    }

    /**
     * The backup's manifest, which must say {@code done}.
     *
     * @throws RestoreException       if there is none or the backup did not complete
     * @throws BackupCorruptException if it does not read or its version is unknown
     */
    BackupManifest manifest() {
        return manifest(backupId, null);
    }

    /** Manifest {@code id}, which must say done; {@code neededBy} names the incremental that needs it, or null. */
    private BackupManifest manifest(String id, String neededBy) {
        String name = id + "/" + BackupManifest.FILE_NAME;
        String role = neededBy == null ? "" : " (the base of incremental backup " + neededBy + ")";
        BackupManifest manifest;
        try (InputStream in = location.open(id, BackupManifest.FILE_NAME)) {
            manifest = BackupManifest.fromJson(name, in.readAllBytes());
        } catch (NoSuchFileException e) {
            throw new RestoreException("no backup " + id + role + " at " + location.describe());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name + " at " + location.describe() + ": " + e, e);
        }
        if (!BackupManifest.DONE.equals(manifest.state())) {
            throw new RestoreException("backup " + id + role + " is " + manifest.state()
                    + (manifest.error() == null ? "" : " (" + manifest.error() + ")") + ": only a done backup restores");
        }
        return manifest;
    }

    /**
     * The backups the restore applies: the backup itself if it is full; for an incremental its chain, the full
     * backup it starts from first, then each incremental on it up to this one. Each must be done.
     *
     * @throws RestoreException       if a backup of the chain is missing or not done, or the chain loops
     * @throws BackupCorruptException if a manifest does not read or its version is unknown
     */
    List<BackupManifest> chain() {
        Deque<BackupManifest> chain = new ArrayDeque<>();
        BackupManifest manifest = manifest();
        chain.addFirst(manifest);
        while (manifest.isIncremental()) {
            String base = manifest.base();
            if (chain.stream().anyMatch(link -> link.id().equals(base))) {
                throw new RestoreException("the chain of backup " + backupId + " loops at " + base);
            }
            manifest = manifest(base, manifest.id());
            chain.addFirst(manifest);
        }
        return List.copyOf(chain);
    }

    /** The records of every member part of every backup in {@code chain}, one source per part. */
    private List<PartRecords> parts(List<BackupManifest> chain) {
        List<PartRecords> parts = new ArrayList<>();
        for (BackupManifest link : chain) {
            for (MemberPart part : link.nodes()) {
                parts.add(new PartRecords(location, link.id(), part.files()));
            }
        }
        return parts;
    }

    /**
     * Reads every file of the backup (of its whole chain, for an incremental) end to end, checking every block's
     * checksum, the trailers and the SHA-256 of the manifest; returns the records read.
     *
     * @throws BackupCorruptException naming file and block on the first mismatch or truncation
     */
    long verify() {
        long records = 0;
        for (BackupManifest manifest : chain()) {
            String id = manifest.id();
            for (MemberPart part : manifest.nodes()) {
                long partRecords = 0;
                try (PartRecords reader = new PartRecords(location, id, part.files())) {
                    while (reader.hasNext()) {
                        reader.next();
                        partRecords++;
                    }
                }
                if (partRecords != part.records()) {
                    throw new BackupCorruptException(id + ": part of " + part.node() + " holds " + partRecords
                            + " records, the manifest says " + part.records());
                }
                records += partRecords;
                out.println("verified " + (id.equals(backupId) ? "" : id + " ") + part.node() + ": "
                        + part.files().stream().map(FileSummary::name).toList() + ", " + partRecords + " records");
            }
        }
        return records;
    }

    /**
     * Checks, before a restore writes anything, that every file of the backup is the one the manifest describes:
     * each is read once through SHA-256 alone (no decompression, no decoding; the JDK's SHA-256 runs on the CPU's
     * SHA extensions where there are any) and compared with the manifest's digest. A file that differs is then read
     * as {@link #verify()} reads it, so that the error names the first block that fails. The restore's own reading
     * checks every block again as it goes. Blocking.
     *
     * @throws BackupCorruptException naming file (and block, when one fails its checksum) on a mismatch or truncation
     */
    void checkFiles() {
        byte[] buffer = new byte[1 << 16];
        for (BackupManifest manifest : chain()) {
            checkFiles(manifest, buffer);
        }
    }

    private void checkFiles(BackupManifest manifest, byte[] buffer) {
        String id = manifest.id();
        for (MemberPart part : manifest.nodes()) {
            for (FileSummary file : part.files()) {
                String name = id + "/" + file.name();
                MessageDigest sha256 = BackupFileWriter.sha256();
                try (InputStream in = location.open(id, file.name())) {
                    for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                        sha256.update(buffer, 0, read);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + name + " at " + location.describe() + ": " + e, e);
                }
                if (!HexFormat.of().formatHex(sha256.digest()).equals(file.sha256())) {
                    try (PartRecords reader = new PartRecords(location, id, List.of(file))) {
                        reader.forEachRemaining(record -> { });
                    }
                    throw new BackupCorruptException(name + ": SHA-256 differs from the manifest's " + file.sha256());
                }
            }
        }
    }

    /**
     * Restores the backup into {@code target}, resuming after {@code checkpoint}'s last key; returns the records
     * written. {@code rate}: records per second written, at most.
     *
     * @throws RestoreException       if a record was not acknowledged by a majority of its replicas (after retries)
     * @throws BackupCorruptException if a file does not read (nothing after the failing block is written)
     */
    long run(TargetCluster target, RestoreCheckpoint checkpoint, double rate, long nowMillis) {
        List<BackupManifest> chain = chain();
        if (chain.size() > 1) {
            out.println("backup " + backupId + " is incremental: restoring its chain "
                    + chain.stream().map(BackupManifest::id).toList() + " (the newest copy of each key wins)");
        }
        List<PartRecords> parts = parts(chain);
        Pacer pacer = Pacer.perSecond(rate);
        RestoreProgress progress = new RestoreProgress(out, terminal,
                chain.stream().mapToLong(BackupManifest::records).sum());
        Deque<Batch> window = new ArrayDeque<>();
        long written = checkpoint.records();
        long bytes = 0;
        long expired = 0;
        long batchBytes = 0;
        long inFlightBytes = 0;
        try {
            MergedRecords merged = new MergedRecords(parts);
            byte[] resumeAfter = checkpoint.lastKey();
            if (resumeAfter != null) {
                out.println("resuming backup " + backupId + " after " + written + " records acknowledged before");
            }
            List<KeyedRecord> batch = new ArrayList<>();
            byte[] batchLastKey = null;
            while (merged.hasNext()) {
                KeyedRecord entry = merged.next();
                if (resumeAfter != null && Arrays.compareUnsigned(entry.key(), resumeAfter) <= 0) {
                    continue;
                }
                batchLastKey = entry.key();
                if (entry.record().isExpiredAt(nowMillis)) {
                    expired++;
                } else {
                    batch.add(entry);
                    int size = entry.key().length + entry.record().value().length;
                    bytes += size;
                    batchBytes += size;
                }
                if (batch.size() >= BATCH_RECORDS || batchBytes >= BATCH_BYTES) {
                    pacer.acquire(batch.size());
                    window.add(new Batch(batchLastKey, batch.size(), batchBytes, target.write(batch)));
                    inFlightBytes += batchBytes;
                    batch = new ArrayList<>();
                    batchBytes = 0;
                    while (!window.isEmpty() && (window.size() >= IN_FLIGHT || inFlightBytes >= IN_FLIGHT_BYTES
                            || window.peek().write().isDone())) {
                        Batch oldest = window.poll();
                        written += acknowledge(oldest, checkpoint);
                        inFlightBytes -= oldest.bytes();
                    }
                }
                progress.update(merged.read(), written, bytes, false);
            }
            if (batchLastKey != null) {
                pacer.acquire(batch.size());
                window.add(new Batch(batchLastKey, batch.size(), batchBytes,
                        batch.isEmpty() ? CompletableFuture.completedFuture(null) : target.write(batch)));
            }
            while (!window.isEmpty()) {
                written += acknowledge(window.poll(), checkpoint);
            }
            progress.update(merged.read(), written, bytes, true);
        } finally {
            checkpoint.flush();
            parts.forEach(PartRecords::close);
        }
        out.println("restored backup " + backupId + ": " + written + " records acknowledged at a majority of their"
                + " replicas, " + expired + " expired values skipped");
        return written;
    }

    private record Batch(byte[] lastKey, int records, long bytes, CompletableFuture<Void> write) {
    }

    /** Waits for {@code batch}, then moves the checkpoint past it; returns its records. */
    private static long acknowledge(Batch batch, RestoreCheckpoint checkpoint) {
        try {
            batch.write().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
        }
        checkpoint.advance(batch.lastKey(), batch.records());
        return batch.records();
    }
}
