package dev.dht.backup;

import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupFileWriter;
import dev.dht.backup.format.BackupManifest.MemberPart;
import dev.dht.backup.location.BackupLocation;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.BackupMetrics;
import dev.dht.node.HybridLogicalClock;
import dev.dht.pacing.Pacer;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * This node's part of a cluster backup: every record of its store (values, tombstones, TTLs, with their
 * timestamps) from one consistent LevelDB snapshot ({@link LocalStore#rangeBatches}, read on the storage threads in
 * batches that take turns with client requests) into member files at the backup location, split at
 * {@code dht.backup.file-size}, paced at {@code dht.backup.rate} bytes per second ({@link Pacer}). An incremental
 * part holds only the records stamped at or after its snapshot point, filtered on the storage threads.
 *
 * <p>Threads: the files are written on the backup scheduler given (blocking I/O, never an event loop); the
 * scheduler's thread waits for the rate and for the storage threads' batches. Memory: one block of the file
 * format and two batches of at most {@link #BATCH_RECORDS} records or {@link #BATCH_BYTES} bytes (or one larger
 * record), the one written and the one read ahead. One part runs at a time on a node: a second one fails with
 * {@link BackupRefusedException}.
 *
 * <p>Stopping the node ({@link #close}) cuts a running part at its next record: the part fails with an
 * {@link OverloadedException} ({@link OverloadReason#SHUTTING_DOWN}, a 503 to the coordinator, which tries the part
 * again once the node is back), its open file is abandoned. Without the cut, a part already read into memory kept
 * writing files after the node stopped serving.
 */
public final class MemberBackup implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MemberBackup.class);
    /** Records a storage task reads for the scan at most. */
    static final int BATCH_RECORDS = 256;
    /** Key and value bytes after which a storage task ends its batch (one larger record is a batch of its own). */
    static final long BATCH_BYTES = 4 << 20;
    /** Records a storage task reads at most while it skips those older than an incremental's snapshot point. */
    static final int SCAN_RECORDS = 4096;
    private static final byte[] FIRST_KEY = new byte[0];
    private final LocalStore store;
    private final BackupLocation location;
    private final URI self;
    private final long bytesPerSecond;
    private final long fileSizeBytes;
    private final Scheduler scheduler;
    private final BackupMetrics metrics;
    private final Map<String, AtomicLong> running = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param self           this node's URL (names its files)
     * @param bytesPerSecond {@code dht.backup.rate}
     * @param fileSizeBytes  {@code dht.backup.file-size}: a new file is started once one holds this many bytes
     * @param scheduler      where the blocking writes run
     */
    public MemberBackup(LocalStore store, BackupLocation location, URI self, long bytesPerSecond, long fileSizeBytes,
                        Scheduler scheduler, BackupMetrics metrics) {
        this.store = store;
        this.location = location;
        this.self = self;
        this.bytesPerSecond = bytesPerSecond;
        this.fileSizeBytes = fileSizeBytes;
        this.scheduler = scheduler;
        this.metrics = metrics;
    }

    /**
     * Writes this node's part of backup {@code id}; completes with its files once all are written, fails with
     * {@link BackupRefusedException} if a part already runs here, or with the I/O or storage failure (an
     * {@link dev.dht.failure.OverloadedException} if the storage queue stays full). Never blocks the caller.
     *
     * @param since the lowest timestamp (hybrid logical clock) of the records written: an incremental part holds the
     *              records stamped since its base (tombstones included); 0 for a full part. The whole store is still
     *              read, in storage tasks that each read at most {@value #SCAN_RECORDS} records; only the records
     *              written count against the rate
     */
    public Mono<MemberPart> run(String id, long since) {
        return Mono.fromCallable(() -> write(id, since)).subscribeOn(scheduler);
    }

    /** Records written so far by the part of backup {@code id} running here, or -1 if none runs. */
    public long progress(String id) {
        AtomicLong records = running.get(id);
        return records == null ? -1 : records.get();
    }

    private MemberPart write(String id, long since) throws IOException {
        AtomicLong records = new AtomicLong();
        if (closed) {
            throw new OverloadedException(OverloadReason.SHUTTING_DOWN, "no backup part: " + self + " is shutting down");
        }
        synchronized (running) {
            if (!running.isEmpty()) {
                throw new BackupRefusedException("a backup part already runs on " + self + ": " + running.keySet());
            }
            running.put(id, records);
        }
        LOG.info("backup {}: part of {} started, to {}{}", id, self, location.describe(),
                since > 0 ? ", records stamped since " + Instant.ofEpochMilli(HybridLogicalClock.millisOf(since)) : "");
        long started = System.nanoTime();
        try {
            MemberPart part = scan(id, since, records);
            LOG.info("backup {}: part of {} done, {} records, {} bytes in {} files, {} ms", id, self, part.records(),
                    part.bytes(), part.files().size(), (System.nanoTime() - started) / 1_000_000);
            return part;
        } catch (RuntimeException | IOException e) {
            LOG.warn("backup {}: part of {} failed after {} records: {}", id, self, records.get(), e.toString());
            throw e;
        } finally {
            running.remove(id);
        }
    }

    /** The scan: blocking, on the backup scheduler's thread. */
    private MemberPart scan(String id, long since, AtomicLong records) throws IOException {
        Pacer pacer = Pacer.perSecond(bytesPerSecond);
        List<BackupFileWriter.FileSummary> files = new ArrayList<>();
        String prefix = fileStem(self);
        OutputStream stream = null;
        BackupFileWriter writer = null;
        // one batch read ahead while the writer takes the other: memory bounded in bytes, whatever the values' sizes
        try (Stream<KeyedRecord> snapshot = store.rangeBatches(FIRST_KEY, null, BATCH_RECORDS, BATCH_BYTES, since, SCAN_RECORDS)
                .toStream(1)
                .flatMap(List::stream)) {
            for (var iterator = snapshot.iterator(); iterator.hasNext(); ) {
                if (closed) {
                    throw new OverloadedException(OverloadReason.SHUTTING_DOWN,
                            "backup part cut: " + self + " is shutting down");
                }
                KeyedRecord entry = iterator.next();
                if (writer == null) {
                    String name = String.format("%s-%04d%s", prefix, files.size(), BackupFileFormat.EXTENSION);
                    stream = location.create(id, name);
                    writer = new BackupFileWriter(name, stream);
                }
                writer.write(entry);
                int size = entry.key().length + entry.record().value().length;
                pacer.acquire(size + BackupFileFormat.ENTRY_OVERHEAD_BYTES);
                metrics.written(1, size);
                records.incrementAndGet();
                if (writer.bytesWritten() >= fileSizeBytes) {
                    files.add(writer.finish());
                    writer = null;
                    stream = null;
                }
            }
            if (writer == null && files.isEmpty()) {
                String name = String.format("%s-%04d%s", prefix, 0, BackupFileFormat.EXTENSION);
                stream = location.create(id, name);
                writer = new BackupFileWriter(name, stream);
            }
            if (writer != null) {
                files.add(writer.finish());
                stream = null;
            }
        } catch (IOException | RuntimeException e) {
            if (stream != null) {
                location.abort(stream);
            }
            throw e;
        }
        long total = files.stream().mapToLong(BackupFileWriter.FileSummary::records).sum();
        long bytes = files.stream().mapToLong(BackupFileWriter.FileSummary::bytes).sum();
        return new MemberPart(self.toString(), total, bytes, files);
    }

    /**
     * Cuts the part running here, if any, at its next record (within one record's pacing wait) and refuses new ones
     * the same way; called when the node begins to stop (its lifecycle's first phase, while the web server still answers) and again
     * on its destruction. Never blocks.
     */
    @Override
    public void close() {
        closed = true;
    }

    /** The stem of a member's file names: its host and port, e.g. {@code node-1.dht_8080}. */
    static String fileStem(URI node) {
        String host = node.getHost() == null ? "node" : node.getHost();
        int port = node.getPort();
        return (host + "_" + (port < 0 ? ("https".equals(node.getScheme()) ? 443 : 80) : port))
                .replaceAll("[^A-Za-z0-9._-]", "_");
    }

}
