package dev.dht.peer;

/**
 * The node-to-node protocol: paths and headers of the internal endpoints. Bodies carry records in the
 * {@link dev.dht.storage.Record} layout, so timestamps and tombstones travel unchanged.
 *
 * <ul>
 *   <li>{@code GET /internal/record?id=ID}: 200 with the record bytes, or 404 if the replica has none.</li>
 *   <li>{@code PUT /internal/record?id=ID}, body = record bytes: 201 once applied (or found older).</li>
 *   <li>{@code POST /internal/records}, body = frames as in {@code RangeFrameCodec} (key, record) and its end
 *       marker, at most {@link #BATCH_MAX_BYTES}: a batch of writes (coalesced by the replication layer); 201 once every
 *       record is applied (or found older), 503 if none could be queued for storage, 400 if malformed.</li>
 *   <li>{@code POST /internal/records/read}, body = the keys as {@link ReadBatchCodec} frames, at most
 *       {@link #READ_BATCH_MAX_KEYS} keys and {@link #BATCH_MAX_BYTES}: a batch of reads (coalesced as writes
 *       are); 200 with each key's answer in order (record, none, or "not read, read it alone" once the records
 *       answered pass {@link #BATCH_MAX_BYTES}), 503 while the node rebuilds or its storage queue is full, 400 if
 *       malformed.</li>
 *   <li>{@code GET /internal/range?start=S[&end=E]}: the replica's local range, tombstones included, as
 *       length-prefixed frames (see {@code RangeFrameCodec}).</li>
 *   <li>{@code GET /internal/repair/tree?peer=URL}: the anti-entropy hash tree of the records this node and the
 *       node {@code URL} (the caller) should both hold, {@code dev.dht.repair.MerkleTree#toBytes()}; 400 if
 *       {@code URL} is not another node of the cluster.</li>
 *   <li>{@code GET /internal/repair/records?peer=URL&segments=S}: those records in the segments whose bits are
 *       set in {@code S} (a {@link java.util.BitSet#toByteArray()} in unpadded base64url), in key order, as
 *       range frames.</li>
 * </ul>
 * Every internal request carries {@link #SECRET_HEADER} with {@code dht.cluster-secret}; without it the
 * answer is 403, so clients cannot forge timestamps.
 */
public final class InternalProtocol {
    /** Path of single-record reads and writes. */
    public static final String RECORD_PATH = "/internal/record";
    /** Path of write batches. */
    public static final String RECORDS_PATH = "/internal/records";
    /** Path of read batches. */
    public static final String READS_PATH = "/internal/records/read";
    /** Most keys in one read batch. */
    public static final int READ_BATCH_MAX_KEYS = 128;
    /** Largest body of a write or read batch, in bytes (frames and end marker), and of a read batch's records. */
    public static final int BATCH_MAX_BYTES = 1 << 20;
    /** Path of local range scans. */
    public static final String RANGE_PATH = "/internal/range";
    /** Path of a repair's hash tree. */
    public static final String REPAIR_TREE_PATH = "/internal/repair/tree";
    /** Path of a repair's records of chosen segments. */
    public static final String REPAIR_RECORDS_PATH = "/internal/repair/records";
    /** Every path of the protocol starts with this. */
    public static final String PATH_PREFIX = "/internal/";
    /**
     * Header of a 503 answer that names why the request was refused, as an
     * {@link dev.dht.failure.OverloadReason#token()} (e.g. {@code disk-full}); the caller's refusal then carries the
     * same reason. Absent from older nodes' answers: read as {@code PEER_OVERLOADED}.
     */
    public static final String OVERLOAD_REASON_HEADER = "X-Dht-Overload-Reason";
    /** Header that carries the cluster secret. */
    public static final String SECRET_HEADER = "X-Dht-Cluster-Secret";

    private InternalProtocol() {
    }
}
