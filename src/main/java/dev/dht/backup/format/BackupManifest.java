package dev.dht.backup.format;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The manifest of one backup ({@value #FILE_NAME} beside its member files), as JSON: the format version, the id,
 * state ({@value #RUNNING}, {@value #DONE}, {@value #FAILED}) and error, start and end (ISO-8601 UTC), the cluster
 * view the backup was taken under (epoch, replication factor, members), and each member's files with record
 * counts, bytes and SHA-256. docs/backup.md shows one. Immutable.
 *
 * @param formatVersion     {@link BackupFileFormat#VERSION} of the files; readers refuse others
 * @param id                the backup's id (also its directory or key prefix)
 * @param state             running, done or failed
 * @param error             why the backup failed (naming the member), or null
 * @param startedAt         when the backup started, ISO-8601
 * @param endedAt           when it ended, ISO-8601, or null while running
 * @param epoch             the epoch of the cluster view at the start
 * @param replicationFactor the view's replication factor
 * @param members           the view's members' URLs
 * @param nodes             each member's part that was written (a member missing under allowMissing has none)
 * @param missing           members left out under allowMissing (empty otherwise)
 * @param coordinator       the URL of the node that runs the backup, or null (a manifest of an older version)
 * @param updatedAt         when the coordinator last wrote the manifest, ISO-8601: while the backup runs it does so
 *                          every {@link #HEARTBEAT}, so a running manifest not written for {@link #STALE_AFTER} is
 *                          one whose coordinator stopped; null in older manifests
 * @param progress          each member's part as the coordinator last saw it (state, attempts, records when done)
 * @param base              an incremental backup's base: the id of the backup it holds the changes since (itself
 *                          full or incremental: restoring this one applies the whole chain); null for a full backup
 * @param since             an incremental's snapshot point, ISO-8601: its parts hold every record whose timestamp
 *                          is at this millisecond or later (the base's start minus {@code dht.backup.incremental-margin});
 *                          null for a full backup
 * @param fullReason        why this backup is full although an incremental one was asked (no done backup at the
 *                          location, or the last one older than the tombstone GC grace allows); null otherwise
 */
public record BackupManifest(int formatVersion, String id, String state, String error, String startedAt,
                             String endedAt, long epoch, int replicationFactor, List<String> members,
                             List<MemberPart> nodes, List<String> missing, String coordinator, String updatedAt,
                             List<PartStatus> progress, String base, String since, String fullReason) {
    /** The manifest's file name within a backup. */
    public static final String FILE_NAME = "manifest.json";
    /** State of a backup still being written. */
    public static final String RUNNING = "running";
    /** State of a complete backup. */
    public static final String DONE = "done";
    /** State of a failed backup (its files are not restorable). */
    public static final String FAILED = "failed";
    /** How often the coordinator writes the manifest of a running backup again. */
    public static final Duration HEARTBEAT = Duration.ofSeconds(10);
    /** Age of its last write after which a running manifest is taken for one whose coordinator stopped. */
    public static final Duration STALE_AFTER = Duration.ofSeconds(60);
    private static final JsonMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    /** Null lists become empty ones. */
    public BackupManifest {
        members = members == null ? List.of() : List.copyOf(members);
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
        missing = missing == null ? List.of() : List.copyOf(missing);
        progress = progress == null ? List.of() : List.copyOf(progress);
    }

    /** A full backup's manifest (no base). */
    public BackupManifest(int formatVersion, String id, String state, String error, String startedAt,
                          String endedAt, long epoch, int replicationFactor, List<String> members,
                          List<MemberPart> nodes, List<String> missing, String coordinator, String updatedAt,
                          List<PartStatus> progress) {
        this(formatVersion, id, state, error, startedAt, endedAt, epoch, replicationFactor, members, nodes, missing,
                coordinator, updatedAt, progress, null, null, null);
    }

    /** A manifest without coordinator, heartbeat or progress (as an older version wrote them). */
    public BackupManifest(int formatVersion, String id, String state, String error, String startedAt,
                          String endedAt, long epoch, int replicationFactor, List<String> members,
                          List<MemberPart> nodes, List<String> missing) {
        this(formatVersion, id, state, error, startedAt, endedAt, epoch, replicationFactor, members, nodes, missing,
                null, null, List.of());
    }

    /**
     * One member's part as the coordinator sees it.
     *
     * @param node     the member's URL
     * @param state    {@value #PART_RUNNING}, {@value #PART_RETRYING} (its last attempt failed on an overload or an
     *                 unreachable member, another follows), {@value #DONE} or {@value #FAILED}
     * @param records  records in its files once done, records written so far while it runs where the coordinator
     *                 knows them (its own part), else 0
     * @param bytes    bytes of its files once done, else 0
     * @param attempts attempts made so far (the first included)
     * @param error    why its last attempt failed, or null
     */
    public record PartStatus(String node, String state, long records, long bytes, int attempts, String error) {
    }

    /** A part being written. */
    public static final String PART_RUNNING = "running";
    /** A part whose last attempt failed and that is tried again. */
    public static final String PART_RETRYING = "retrying";

    /**
     * One member's part of a backup.
     *
     * @param node    the member's URL
     * @param records records in its files
     * @param bytes   bytes of its files
     * @param files   its files, in key order (a part is split into files at {@code dht.backup.file-size})
     */
    public record MemberPart(String node, long records, long bytes, List<BackupFileWriter.FileSummary> files) {
        /** Null becomes an empty list. */
        public MemberPart {
            files = files == null ? List.of() : List.copyOf(files);
        }

        /** The JSON of this part (the body of {@code POST /internal/backup}'s answer). */
        public byte[] toJson() {
            return JSON.writeValueAsBytes(this);
        }

        /**
         * Reads {@link #toJson()}'s bytes.
         *
         * @throws BackupCorruptException if they are not a member part
         */
        public static MemberPart fromJson(byte[] json) {
            try {
                return JSON.readValue(json, MemberPart.class);
            } catch (JacksonException e) {
                throw new BackupCorruptException("member part: malformed JSON: " + e.getOriginalMessage(), e);
            }
        }
    }

    /** This manifest with {@code state}, {@code error}, {@code endedAt}, the parts and the missing replaced. */
    public BackupManifest ended(String newState, String newError, String newEndedAt, List<MemberPart> newNodes,
                                List<String> newMissing) {
        return new BackupManifest(formatVersion, id, newState, newError, startedAt, newEndedAt, epoch,
                replicationFactor, members, newNodes, newMissing, coordinator, newEndedAt, progress, base, since,
                fullReason);
    }

    /** This manifest as written at {@code now} with {@code newProgress}. */
    public BackupManifest updated(String now, List<PartStatus> newProgress) {
        return new BackupManifest(formatVersion, id, state, error, startedAt, endedAt, epoch, replicationFactor,
                members, nodes, missing, coordinator, now, newProgress, base, since, fullReason);
    }

    /** Whether this backup is incremental: it holds only the changes since {@link #base()}. */
    public boolean isIncremental() {
        return base != null;
    }

    /**
     * Whether this manifest says running but was last written more than {@link #STALE_AFTER} before {@code now}
     * (its start, in a manifest without {@code updatedAt}): its coordinator stopped before it ended.
     */
    public boolean isStale(Instant now) {
        if (!RUNNING.equals(state)) {
            return false;
        }
        String written = updatedAt != null ? updatedAt : startedAt;
        try {
            return Instant.parse(written).plus(STALE_AFTER).isBefore(now);
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** Records of every member part. */
    public long records() {
        return nodes.stream().mapToLong(MemberPart::records).sum();
    }

    /** Bytes of every member part's files. */
    public long bytes() {
        return nodes.stream().mapToLong(MemberPart::bytes).sum();
    }

    /** The manifest as indented JSON, UTF-8. */
    public byte[] toJson() {
        return JSON.writeValueAsBytes(this);
    }

    /**
     * Reads a manifest; {@code name} names it in messages.
     *
     * @throws BackupCorruptException if it is not JSON, lacks a format version, or has one this code does not know
     */
    public static BackupManifest fromJson(String name, byte[] json) {
        try {
            JsonNode tree = JSON.readTree(json);
            JsonNode version = tree.get("formatVersion");
            if (version == null || !version.isIntegralNumber()) {
                throw new BackupCorruptException(name + ": no formatVersion (not a backup manifest)");
            }
            if (version.asInt() != BackupFileFormat.VERSION) {
                throw new BackupCorruptException(name + ": format version " + version.asInt()
                        + " is unknown to this version (it reads version " + BackupFileFormat.VERSION + ")");
            }
            return JSON.treeToValue(tree, BackupManifest.class);
        } catch (JacksonException e) {
            throw new BackupCorruptException(name + ": malformed JSON: " + e.getOriginalMessage(), e);
        }
    }

    @Override
    public String toString() {
        return new String(toJson(), StandardCharsets.UTF_8);
    }
}
