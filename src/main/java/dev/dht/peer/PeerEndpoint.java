package dev.dht.peer;

import dev.dht.cluster.Node;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.http.HttpMethod;
import org.springframework.web.util.UriUtils;

/**
 * The endpoints of the node-to-node protocol, one constant each (after Cassandra's {@code Verb}): its HTTP
 * method, path, query parameters, how long its answer may take ({@link Timeout}) and the operation tag its calls
 * are timed under. Each constant's comment gives its bodies and statuses. Every request carries
 * {@link InternalProtocol#SECRET_HEADER} (403 without it); a 503 names its reason in
 * {@link InternalProtocol#OVERLOAD_REASON_HEADER}. Records travel in the {@link dev.dht.storage.Record} layout,
 * so timestamps and tombstones travel unchanged. {@link PeerClient} calls them; each feature serves its
 * own, and {@code peer.server.PeerRoutes} routes each to its handler.
 */
public enum PeerEndpoint {
    /**
     * {@code GET /internal/record?id=ID[&from=F]}: 200 with the record bytes, 404 if the replica has none; 503
     * {@code stale-epoch} if the call's epoch is stale for the key read with {@code F} replicas (without it, every
     * member counts).
     */
    READ(HttpMethod.GET, InternalProtocol.RECORD_PATH, Timeout.RESPONSE, "read", "id", "from"),
    /**
     * {@code PUT /internal/record?id=ID}, body = record bytes: 201 once applied (or found older); 503
     * {@code stale-epoch}, nothing applied, if the call's epoch is stale for the key (placed with the record's from).
     */
    WRITE(HttpMethod.PUT, InternalProtocol.RECORD_PATH, Timeout.RESPONSE, "write", "id"),
    /**
     * {@code POST /internal/records}, body = {@link RangeFrameCodec} frames and end marker, at most
     * {@link InternalProtocol#BATCH_MAX_BYTES}: a batch of writes; 201 once every record is applied (or found
     * older), 503 if none could be queued for storage or (reason {@code stale-epoch}, nothing applied) if the call's
     * epoch is stale for one of the keys, 400 if malformed.
     */
    WRITE_BATCH(HttpMethod.POST, InternalProtocol.RECORDS_PATH, Timeout.RESPONSE, "write-batch"),
    /**
     * {@code POST /internal/records/read[?from=F]}, body = at most {@link InternalProtocol#READ_BATCH_MAX_KEYS} keys
     * as {@link ReadBatchCodec} frames: 200 with each key's answer in order (record, none, or "read it alone" once
     * the records answered pass {@link InternalProtocol#BATCH_MAX_BYTES}), 503 while the node rebuilds or its
     * storage queue is full or (reason {@code stale-epoch}) if the call's epoch is stale for one of the keys read
     * with {@code F} replicas (the largest of the batch; without it, every member counts), 400 if malformed.
     */
    READ_BATCH(HttpMethod.POST, InternalProtocol.READS_PATH, Timeout.RESPONSE, "read-batch", "from"),
    /**
     * {@code GET /internal/range?start=S[&end=E]}: 200 with the replica's local range, tombstones included, as
     * {@link RangeFrameCodec} frames; 503 {@code stale-epoch} if a member joined since the call's epoch (or that view
     * is unknown to the replica).
     */
    RANGE(HttpMethod.GET, InternalProtocol.RANGE_PATH, Timeout.STREAM, "range", "start", "end"),
    /**
     * {@code GET /internal/repair/tree?peer=URL}: 200 with the anti-entropy hash tree of the records this node and
     * node {@code URL} (the caller) should both hold ({@code dev.dht.repair.MerkleTree#toBytes()}); 400 if
     * {@code URL} is not another node of the cluster. Not timed.
     */
    REPAIR_TREE(HttpMethod.GET, InternalProtocol.REPAIR_TREE_PATH, Timeout.REPAIR_TREE, null, "peer"),
    /**
     * {@code GET /internal/repair/records?peer=URL&segments=S}: 200 with the shared records of the segments whose
     * bits are set in {@code S} (a {@link java.util.BitSet#toByteArray()} in unpadded base64url), in key order, as
     * {@link RangeFrameCodec} frames. Not timed.
     */
    REPAIR_RECORDS(HttpMethod.GET, InternalProtocol.REPAIR_RECORDS_PATH, Timeout.PACED, null, "peer", "segments"),
    /**
     * {@code GET /internal/cluster/view}: 200 with the node's cluster view in the text of
     * {@code dev.dht.cluster.ClusterViewFile#encode}, and {@link InternalProtocol#CLEANUP_PENDING_HEADER}.
     */
    VIEW(HttpMethod.GET, InternalProtocol.VIEW_PATH, Timeout.RESPONSE, null),
    /**
     * {@code POST /internal/cluster/view[?expect=E]}, body = a view's text: the node adopts it if it is newer than
     * its own, stores it, waits until the requests it coordinated under older epochs finished, and answers 200 with
     * the view it then holds. With {@code expect}, the first view of a change from a node that holds no view log yet (a
     * joiner): appended to the log if the log's view is at epoch {@code E}; 409 otherwise, naming why. 400 if
     * malformed.
     */
    PROPOSE_VIEW(HttpMethod.POST, InternalProtocol.VIEW_PATH, Timeout.PACED, null, "expect"),
    /**
     * {@code GET /internal/cluster/stream?peer=URL&epoch=E[&after=KEY][&part=P]}: 200 with the records the node
     * {@code URL} gains in the change in progress at epoch {@code E} and this node held before it (keys after
     * {@code KEY}, in key order, tombstones included) as {@link RangeFrameCodec} frames, all of them or the
     * {@link StreamPart} {@code P}; 409 if this node's change is another one, 400 for an unknown part.
     */
    STREAM(HttpMethod.GET, InternalProtocol.STREAM_PATH, Timeout.PACED, null, "peer", "epoch", "after", "part"),
    /**
     * {@code POST /internal/cluster/stream?epoch=E[&lost=URL,URL]}: the node pulls every record it gains in the change
     * at epoch {@code E} from every live node that held it before, but the members {@code lost} in a recovery of the
     * view log (dead for good); 200 once all are stored, 409 if it holds another change.
     */
    PULL(HttpMethod.POST, InternalProtocol.STREAM_PATH, Timeout.PACED, null, "epoch", "lost"),
    /**
     * {@code POST /internal/cluster/cleanup?epoch=E}: every member took the view of epoch {@code E}, which ended a
     * change, and finished the requests placed under older ones: the node starts its cleanup pass now (200), if it
     * holds epoch {@code E} and its cleanup is pending; otherwise the call changes nothing (200 too).
     */
    CLEANUP(HttpMethod.POST, InternalProtocol.CLEANUP_PATH, Timeout.RESPONSE, null, "epoch"),
    /**
     * {@code POST /internal/backup?id=ID}: the node writes its part of backup {@code ID} (every record of its store,
     * from one snapshot; with {@code since=T}, an incremental part: only those stamped at hybrid-logical-clock
     * timestamp {@code T} or later) to its {@code dht.backup.location}, paced, and answers 200 once all its files
     * are written, with the part as JSON ({@code dev.dht.backup.format.BackupManifest.MemberPart}); 409 if it has no location or a
     * part already runs there, 400 for a malformed id or since, 500 if writing failed (the body says why). Not timed: the
     * node paces the scan.
     */
    BACKUP(HttpMethod.POST, InternalProtocol.BACKUP_PATH, Timeout.PACED, null, "id", "since"),
    /**
     * {@code GET /internal/node/stats}: 200 with the node's {@link NodeStats} as text (records, bytes on disk, hints
     * held per peer); also the probe of {@code GET /actuator/cluster/status}, which bounds the call itself and marks
     * a peer that does not answer down.
     */
    STATS(HttpMethod.GET, InternalProtocol.STATS_PATH, Timeout.PACED, null);

    /** How long an endpoint's answer may take; the durations are {@link PeerClient}'s. */
    public enum Timeout {
        /** The client's response timeout ({@code dht.replica-timeout}) between reads of the answer. */
        RESPONSE,
        /**
         * Response timeout off: the first item within {@code dht.replica-timeout}, then at most
         * {@code dht.range-idle-timeout} without data while data is wanted ({@link IdleStreamTimeout}).
         */
        STREAM,
        /** Response timeout off: the whole answer within {@link PeerClient#REPAIR_TREE_TIMEOUT}. */
        REPAIR_TREE,
        /** Response timeout off and no other: the caller paces the stream. */
        PACED
    }

    private final HttpMethod method;
    private final String path;
    private final Timeout timeout;
    private final String operation;
    private final List<String> parameters;

    PeerEndpoint(HttpMethod method, String path, Timeout timeout, String operation, String... parameters) {
        this.method = method;
        this.path = path;
        this.timeout = timeout;
        this.operation = operation;
        this.parameters = List.of(parameters);
    }

    /** The HTTP method. */
    public HttpMethod method() {
        return method;
    }

    /** The path, e.g. {@code /internal/record}. */
    public String path() {
        return path;
    }

    /** How long the answer may take. */
    public Timeout timeout() {
        return timeout;
    }

    /** The {@code operation} tag of Timer {@code dht.replica.calls}, or null if calls are not timed. */
    public String operation() {
        return operation;
    }

    /**
     * This endpoint on {@code peer}, with the query parameters in the order of the table, each value
     * percent-encoded outside RFC 3986's unreserved characters (as a URI template's variables are); a null value
     * leaves its parameter out.
     *
     * @throws IllegalArgumentException if the number of values is not the number of parameters
     */
    public URI uri(Node peer, String... values) {
        if (values.length != parameters.size()) {
            throw new IllegalArgumentException(this + " takes " + parameters + ", got " + values.length + " values");
        }
        StringBuilder uri = new StringBuilder().append(peer.url()).append(path);
        char separator = '?';
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null) {
                uri.append(separator).append(parameters.get(i)).append('=')
                        .append(UriUtils.encode(values[i], StandardCharsets.UTF_8));
                separator = '&';
            }
        }
        return URI.create(uri.toString());
    }
}
