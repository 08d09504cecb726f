package dev.dht.peer;

/**
 * The constants of the node-to-node protocol on the wire: its paths, headers and batch limits, shared by the
 * calling side ({@link PeerClient}) and the serving side ({@code peer.server}). Each endpoint, with its method,
 * bodies and statuses, is a constant of {@link PeerEndpoint}.
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
    /**
     * Header that carries {@code dht.cluster-secret} on every internal request; without it the answer is 403, so
     * clients cannot forge timestamps.
     */
    public static final String SECRET_HEADER = "X-Dht-Cluster-Secret";

    private InternalProtocol() {
    }
}
