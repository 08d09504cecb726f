package dev.dht.peer;

/**
 * The constants of the node-to-node protocol on the wire: its paths, headers and batch limits, shared by the
 * calling side ({@link PeerClient}) and the serving side (each feature's handlers, routed by
 * {@code peer.server.PeerRoutes}). Each endpoint, with its method, bodies and statuses, is a constant of
 * {@link PeerEndpoint}.
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
    /** Path of the cluster view: read, or proposed. */
    public static final String VIEW_PATH = "/internal/cluster/view";
    /** Path of the records a node gains in a membership change: streamed, or pulled. */
    public static final String STREAM_PATH = "/internal/cluster/stream";
    /** Path of the start of a cleanup pass after a change. */
    public static final String CLEANUP_PATH = "/internal/cluster/cleanup";
    /** Path of a node's figures for the operator's status: records, bytes on disk, hints held. */
    public static final String STATS_PATH = "/internal/node/stats";
    /** Path of a node's part of a cluster backup. */
    public static final String BACKUP_PATH = "/internal/backup";
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
    /**
     * Header with the epoch of the sender's cluster view, on every internal request and answer: a node that sees a
     * higher epoch than its own fetches that view from the sender ({@link #SENDER_HEADER}) or the peer.
     */
    public static final String EPOCH_HEADER = "X-Dht-Epoch";
    /**
     * Header with the id of the sender's cluster ({@code dev.dht.cluster.ClusterView#cluster}), on every internal
     * request and answer: a request that names another id than the receiver's is refused with 403
     * ({@code peer.server.ClusterIdFilter}); one without it (a node of the version before cluster ids) is served.
     */
    public static final String CLUSTER_ID_HEADER = "X-Dht-Cluster-Id";
    /** Header with the base URL of the node that sent an internal request. */
    public static final String SENDER_HEADER = "X-Dht-Sender";
    /** Header of a view answer: {@code true} while the node still drops records it no longer replicates. */
    public static final String CLEANUP_PENDING_HEADER = "X-Dht-Cleanup-Pending";

    private InternalProtocol() {
    }
}
