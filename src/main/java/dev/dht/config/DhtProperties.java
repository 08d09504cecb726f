package dev.dht.config;

import dev.dht.backup.location.ObjectEncryption;
import dev.dht.storage.StorageEngine;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The settings of a node, prefix {@code dht} (environment variables {@code DHT_SELF}, {@code DHT_NODES}, ...), but
 * for the admission ({@link AdmissionProperties}), replica client ({@link ReplicaClientProperties}) and TLS
 * ({@link TlsProperties}) ones; checked when bound: a wrong one stops start-up with an
 * {@link InvalidSettingException} naming it. What each setting trades: docs/operations.md, "The settings explained".
 *
 * <p>The {@code @param} comments of these records describe the settings: the configuration processor writes them,
 * with each name and {@code @DefaultValue}, into {@code META-INF/spring-configuration-metadata.json}, and
 * docs/reference.md lists them as written there (SettingsReferenceTest). A default is stated by the code alone.
 *
 * @param self                   this node's base URL, {@code http://host:port} ({@code https://} with TLS)
 * @param nodes                  base URLs of the nodes of a brand-new cluster, comma-separated, self included, in the
 *                               same order on every node (its first cluster view); once a node stored a view, that
 *                               view decides membership and these only name seeds: a node not listed joins through
 *                               them
 * @param dataDir                directory of this node's LevelDB files; created if missing, must be writable
 * @param replicationFactor      copies a request without {@code replicas} keeps; it is answered at their majority
 * @param clusterSecret          secret of {@code /internal/*} and the actuator's writes (header
 *                               {@code X-Dht-Cluster-Secret}); required with more than one node
 * @param ioThreads              Netty event loops of the web server and replica client; 0: one per processor
 * @param storage                storage settings
 * @param hints                  hinted handoff settings
 * @param repair                 anti-entropy repair settings
 * @param tombstone              tombstone garbage collection settings
 * @param rebuild                at start, stream this node's records from its peers before serving replica reads (a
 *                               lost disk replaced: docs/operations.md, "Rebuild")
 * @param cleanup                after a membership change, drop the records this node no longer replicates (Cassandra's
 *                               {@code nodetool cleanup}, run by itself); false keeps them, and a key deleted on its
 *                               owners can then come back from a former owner once its tombstone is collected
 * @param streamRate             records (first pass) or digests (second pass) per second a node gaining keys in a
 *                               membership change takes from one source, at most (Cassandra's stream throughput
 *                               limit)
 * @param raft                   the view log's Raft settings
 * @param changeFailureTimeout   how long any member a membership change waits for (its joining or leaving node
 *                               included, not the node a removenode removes) may stay silent before the change is
 *                               rolled back; counted from the change's start at the earliest
 * @param backup                 cluster backup settings
 */
@ConfigurationProperties("dht")
public record DhtProperties(
        URI self,
        List<URI> nodes,
        Path dataDir,
        @DefaultValue("3") int replicationFactor,
        @DefaultValue("") String clusterSecret,
        @DefaultValue("0") int ioThreads,
        @DefaultValue Storage storage,
        @DefaultValue Hints hints,
        @DefaultValue Repair repair,
        @DefaultValue Tombstone tombstone,
        @DefaultValue("false") boolean rebuild,
        @DefaultValue("true") boolean cleanup,
        @DefaultValue("50000") int streamRate,
        @DefaultValue Raft raft,
        @DefaultValue("60s") Duration changeFailureTimeout,
        @DefaultValue Backup backup) {

    /** Validates every setting; see the record comment. */
    public DhtProperties {
        if (self == null) {
            throw new InvalidSettingException("dht.self", "must be set to this node's base URL, e.g. http://localhost:8080");
        }
        checkUrl("dht.self", self);
        if (nodes == null || nodes.isEmpty()) {
            throw new InvalidSettingException("dht.nodes", "must list the nodes of a new cluster, or seeds to join through");
        }
        Set<URI> seen = new HashSet<>();
        for (URI node : nodes) {
            checkUrl("dht.nodes", node);
            if (!seen.add(node)) {
                throw new InvalidSettingException("dht.nodes", "lists " + node + " twice");
            }
        }
        if ((nodes.size() > 1 || !seen.contains(self)) && (clusterSecret == null || clusterSecret.isBlank())) {
            throw new InvalidSettingException("dht.cluster-secret", "must be set when dht.nodes lists another node");
        }
        if (streamRate < 1) {
            throw new InvalidSettingException("dht.stream-rate", "must be at least 1 record per second, was "
                    + streamRate);
        }
        if (changeFailureTimeout.isNegative() || changeFailureTimeout.isZero()) {
            throw new InvalidSettingException("dht.change-failure-timeout", "must be positive, was "
                    + changeFailureTimeout);
        }
        InvalidSettingException.requireAtLeast("dht.replication-factor", replicationFactor, 1);
        if (dataDir == null) {
            throw new InvalidSettingException("dht.data-dir", "must be set");
        }
        checkWritable(dataDir);
        if (ioThreads < 0) {
            throw new InvalidSettingException("dht.io-threads", "must be at least 0 (0: one per available processor), was " + ioThreads);
        }
        checkGcGrace(tombstone.gcGrace(), repair.interval(), hints.window());
    }

    /**
     * Tombstones must outlive every way a replica that missed a delete catches up (Cassandra's gc_grace_seconds
     * rule): a scheduled repair and a hint replay both have to happen within the grace, or a purged tombstone lets
     * the deleted value come back from the replica that missed it.
     */
    private static void checkGcGrace(Duration gcGrace, Duration repairInterval, Duration hintWindow) {
        if (gcGrace.compareTo(repairInterval) < 0 || gcGrace.compareTo(hintWindow) < 0) {
            throw new InvalidSettingException("dht.tombstone.gc-grace", "must be at least dht.repair.interval ("
                    + repairInterval + ") and dht.hints.window (" + hintWindow + "), was " + gcGrace);
        }
    }

    static void checkUrl(String setting, URI url) {
        boolean http = "http".equals(url.getScheme()) || "https".equals(url.getScheme());
        if (!http || url.getHost() == null || url.getPort() < 1
                || (url.getPath() != null && !url.getPath().isEmpty() && !"/".equals(url.getPath()))
                || url.getQuery() != null) {
            throw new InvalidSettingException(setting,
                    "'" + url + "' is not a base URL of the form http://host:port");
        }
    }

    /** Event loop threads to start: {@code ioThreads}, or one per available processor if it is 0. */
    public int effectiveIoThreads() {
        return ioThreads > 0 ? ioThreads : Runtime.getRuntime().availableProcessors();
    }

    private static void checkWritable(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException | SecurityException e) {
            throw new InvalidSettingException("dht.data-dir", "cannot create " + dir.toAbsolutePath() + " (" + e + ")");
        }
        if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
            throw new InvalidSettingException("dht.data-dir", dir.toAbsolutePath() + " is not a writable directory");
        }
    }

    /**
     * Storage settings, prefix {@code dht.storage}; what each trades: docs/operations.md, "The settings explained".
     *
     * @param engine          {@code jni} (leveldbjni, x86-64 only) or {@code java} (pure-Java LevelDB, any CPU, e.g.
     *                        ARM; slower)
     * @param sync            fsync every write: an acknowledged write survives power loss, not only {@code kill -9}
     * @param threads         storage worker threads, which run every LevelDB call
     * @param queueCapacity   storage tasks that may wait; beyond it requests get 503
     * @param rowCacheSize    heap for a row cache of recently read records (bytes, KB, MB, GB); 0: off
     * @param minFreeSpace    usable disk space the data dir must keep: below it writes get 503 and hints are dropped
     *                        (bytes, KB, MB, GB); 0: no check. It must hold about 5 memtables and 10MB
     * @param compactionNice  Linux nice value (0-19) of LevelDB's flush and compaction thread; JNI engine on Linux
     *                        only
     * @param writeBufferSize LevelDB's memtable size, its {@code write_buffer_size} (bytes, KB, MB; 64KB to 512MB)
     */
    public record Storage(
            @DefaultValue("jni") StorageEngine engine,
            @DefaultValue("false") boolean sync,
            @DefaultValue("4") int threads,
            @DefaultValue("1024") int queueCapacity,
            @DefaultValue("0") DataSize rowCacheSize,
            @DefaultValue("64MB") DataSize minFreeSpace,
            @DefaultValue("0") int compactionNice,
            @DefaultValue("4MB") DataSize writeBufferSize) {

        /** Validates the storage settings. */
        public Storage {
            InvalidSettingException.requireAtLeast("dht.storage.threads", threads, 1);
            InvalidSettingException.requireAtLeast("dht.storage.queue-capacity", queueCapacity, 1);
            InvalidSettingException.requireNotNegative("dht.storage.row-cache-size", rowCacheSize);
            InvalidSettingException.requireNotNegative("dht.storage.min-free-space", minFreeSpace);
            if (compactionNice < 0 || compactionNice > 19) {
                throw new InvalidSettingException("dht.storage.compaction-nice", "must be 0..19, was " + compactionNice);
            }
            long writeBufferBytes = writeBufferSize.toBytes();
            if (writeBufferBytes < DataSize.ofKilobytes(64).toBytes()
                    || writeBufferBytes > DataSize.ofMegabytes(512).toBytes()) {
                throw new InvalidSettingException("dht.storage.write-buffer-size",
                        "must be 64KB..512MB, was " + writeBufferSize);
            }
        }
    }

    /**
     * Hinted handoff settings, prefix {@code dht.hints}: a replica write that fails becomes a hint on the
     * coordinator, replayed to the replica once it is seen up.
     *
     * @param enabled    store hints of failed replica writes (hints already stored are replayed either way)
     * @param window     no new hints for a peer that has been down longer than this (Cassandra's
     *                   max_hint_window)
     * @param maxSize    disk space the hint store may take (bytes, KB, MB, GB); a full store drops new
     *                   hints, never a client write
     * @param replayRate hints replayed per second to one peer, at most
     */
    public record Hints(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("3h") Duration window,
            @DefaultValue("1GB") DataSize maxSize,
            @DefaultValue("1000") int replayRate) {

        /** Validates the hint settings. */
        public Hints {
            InvalidSettingException.requireNotNegative("dht.hints.window", window);
            InvalidSettingException.requireNotNegative("dht.hints.max-size", maxSize);
            InvalidSettingException.requireAtLeast("dht.hints.replay-rate", replayRate, 1);
        }
    }

    /**
     * Anti-entropy repair settings, prefix {@code dht.repair}.
     *
     * @param interval time between two scheduled anti-entropy repairs of this node with each peer; 0 schedules none
     *                 (repair then runs only on demand: {@code POST /actuator/repair})
     * @param maxRate  records per second a repair with one peer compares and streams, at most (the records of
     *                 differing segments, both sides counted once per key), so that client requests keep their
     *                 latency during a repair
     * @param scanRate records per second one scan of the store reads, at most: the scan that builds a hash tree
     *                 (on both nodes of a repair) and the one that streams the records of differing segments;
     *                 every record of the store counts
     */
    public record Repair(@DefaultValue("1h") Duration interval, @DefaultValue("5000") int maxRate,
                         @DefaultValue("20000") int scanRate) {

        /** Validates the repair settings. */
        public Repair {
            if (interval.isNegative()) {
                throw new InvalidSettingException("dht.repair.interval", "must not be negative (0: none scheduled), was "
                        + interval);
            }
            InvalidSettingException.requireAtLeast("dht.repair.max-rate", maxRate, 1);
            InvalidSettingException.requireAtLeast("dht.repair.scan-rate", scanRate, 1);
        }
    }

    /**
     * Tombstone garbage collection settings, prefix {@code dht.tombstone}.
     *
     * @param gcGrace    how long a tombstone (or an expired value) is kept before a background pass purges it; at
     *                   least {@code dht.repair.interval} and {@code dht.hints.window}. A node down longer refuses
     *                   to start (docs/operations.md, "Rebuild")
     * @param gcInterval time between two purge passes; 0 runs none
     * @param gcRate     records a pass purges per second, at most
     */
    public record Tombstone(
            @DefaultValue("10d") Duration gcGrace,
            @DefaultValue("1h") Duration gcInterval,
            @DefaultValue("1000") int gcRate) {

        /** Validates the tombstone GC settings (the grace against the others: see {@link DhtProperties}). */
        public Tombstone {
            if (gcInterval.isNegative()) {
                throw new InvalidSettingException("dht.tombstone.gc-interval", "must not be negative (0: no purge), was "
                        + gcInterval);
            }
            InvalidSettingException.requireAtLeast("dht.tombstone.gc-rate", gcRate, 1);
        }
    }

    /**
     * The view log's Raft settings (docs/membership.md).
     *
     * @param port    the port of this node's Raft server; unset: the server port plus 1000 (9080 beside 8080). Every
     *                node of a cluster keeps the same distance between the two: a node finds a peer's Raft server at
     *                the peer's URL port plus its own distance
     * @param voters  members that vote in the log, at most (the NORMAL members, then a leaving one until its change
     *                ends, cut to an odd count; the rest, joiners too, receive it as listeners)
     * @param recover recover the log from a lost majority of its voters at this start: this node becomes its only
     *                voter, going on from the newest view it holds; once only (a marker in the data dir), and never
     *                while a majority of the voters answers (docs/membership.md, "Recovery from a lost majority")
     */
    public record Raft(Integer port, @DefaultValue("5") int voters, @DefaultValue("false") boolean recover) {
        /** @throws InvalidSettingException if a value is out of range */
        public Raft {
            if (port != null && (port < 1 || port > 65535)) {
                throw new InvalidSettingException("dht.raft.port", "must be a TCP port from 1 to 65535, was " + port);
            }
            InvalidSettingException.requireAtLeast("dht.raft.voters", voters, 1);
        }
    }

    /**
     * Cluster backup settings, prefix {@code dht.backup} (docs/backup.md).
     *
     * @param location    where backups go: {@code file:/path} (a directory every node can write: local for one
     *                    machine, a shared volume otherwise) or {@code s3://bucket/prefix}; empty: backups are refused
     *                    (409)
     * @param rate        bytes per second this node reads from its store and writes to the location during a
     *                    backup, at most (bytes, KB, MB, GB)
     * @param keep        completed backups kept; older ones are deleted after each backup that completes
     * @param fileSize    a member's part is split into files of about this many bytes (bytes, KB, MB, GB; 1MB to
     *                    4TB)
     * @param s3Endpoint  S3 endpoint override for S3-compatible stores (MinIO, Ceph, SeaweedFS); empty: AWS
     * @param s3Region    S3 region
     * @param s3PathStyle address buckets by path ({@code endpoint/bucket/key}) instead of by host name, as most
     *                    S3-compatible stores need
     * @param nice        Linux nice value (0-19) of the threads that encode, compress, checksum and write backup
     *                    files, so that a backup takes the CPU requests leave idle; 0: as the rest
     * @param retryWindow how long a member's part that failed on an overload (503) or an unreachable member (a
     *                    restart) is tried again, with backoff, before the backup fails; 0: not at all
     * @param s3          settings of S3 locations beyond the endpoint: encryption, upload memory
     * @param incrementalMargin an incremental backup holds the records stamped since its base started, less this:
     *                    at least {@code dht.replica-timeout} plus the largest skew between the nodes' clocks
     *                    (docs/backup.md, "Incremental backups")
     */
    public record Backup(
            @DefaultValue("") String location,
            @DefaultValue("64MB") DataSize rate,
            @DefaultValue("7") int keep,
            @DefaultValue("1GB") DataSize fileSize,
            @DefaultValue("") String s3Endpoint,
            @DefaultValue("us-east-1") String s3Region,
            @DefaultValue("false") boolean s3PathStyle,
            @DefaultValue("19") int nice,
            @DefaultValue("60s") Duration retryWindow,
            @DefaultValue S3 s3,
            @DefaultValue("1m") Duration incrementalMargin) {

        /** Validates the backup settings. */
        public Backup {
            if (!location.isEmpty() && !location.startsWith("file:") && !location.startsWith("s3://")) {
                throw new InvalidSettingException("dht.backup.location",
                        "must be file:/path or s3://bucket/prefix, was " + location);
            }
            if (rate.toBytes() < DataSize.ofKilobytes(1).toBytes()) {
                throw new InvalidSettingException("dht.backup.rate", "must be at least 1KB (per second), was " + rate);
            }
            InvalidSettingException.requireAtLeast("dht.backup.keep", keep, 1);
            if (fileSize.toBytes() < DataSize.ofMegabytes(1).toBytes()
                    || fileSize.toBytes() > DataSize.ofTerabytes(4).toBytes()) {
                throw new InvalidSettingException("dht.backup.file-size", "must be 1MB to 4TB (an S3 object holds at"
                        + " most 5TB), was " + fileSize);
            }
            if (nice < 0 || nice > 19) {
                throw new InvalidSettingException("dht.backup.nice", "must be 0..19, was " + nice);
            }
            if (retryWindow.isNegative()) {
                throw new InvalidSettingException("dht.backup.retry-window", "must be 0 or more, was " + retryWindow);
            }
            if (incrementalMargin.isNegative()) {
                throw new InvalidSettingException("dht.backup.incremental-margin", "must be 0 or more, was "
                        + incrementalMargin);
            }
        }
    }

    /**
     * Settings of S3 backup locations, prefix {@code dht.backup.s3} (docs/backup.md).
     *
     * @param sse          server-side encryption of every object a backup writes: empty (the bucket's default),
     *                     {@code AES256} (SSE-S3) or {@code aws:kms} (SSE-KMS)
     * @param kmsKeyId     the KMS key of {@code aws:kms} (id or ARN); empty: the account's {@code aws/s3} key
     * @param uploadMemory bytes of multipart parts a node uploads at once, at most (at least one part goes); parts
     *                     are 8 MiB, larger where {@code dht.backup.file-size} needs more than 10 000 of them

     */
    public record S3(
            @DefaultValue("") String sse,
            @DefaultValue("") String kmsKeyId,
            @DefaultValue("64MB") DataSize uploadMemory) {

        /** Validates the S3 settings. */
        public S3 {
            try {
                ObjectEncryption.of(sse, kmsKeyId);
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException(kmsKeyId.isBlank() ? "dht.backup.s3.sse" : "dht.backup.s3.kms-key-id",
                        e.getMessage());
            }
            if (uploadMemory.toBytes() < DataSize.ofMegabytes(8).toBytes()) {
                throw new InvalidSettingException("dht.backup.s3.upload-memory", "must be at least 8MB (one part), was "
                        + uploadMemory);
            }
        }

        /** The encryption {@link #sse} and {@link #kmsKeyId} name. */
        public ObjectEncryption encryption() {
            return ObjectEncryption.of(sse, kmsKeyId);
        }
    }
}
