package dev.dht.membership;

import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.membership.raft.ViewLog;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import reactor.core.publisher.Mono;

/**
 * Actuator endpoint {@code cluster}, the operator's view of membership and door to change it.
 *
 * <ul>
 *   <li>{@code GET /actuator/cluster}: {@code {"epoch": 7, "cluster": UUID, "replicationFactor": 3, "members":
 *       [{"node": URL, "state": "NORMAL"}, ...], "change": null}} ({@code cluster}: the cluster's id); while a
 *       change runs, {@code change} is {@code {"kind": "join",
 *       "node": URL, "phase": "streaming", "streamed": {"records": N, "bytes": N}}} (what this node stored from
 *       streams), and {@code cleanupPending} says whether this node still drops records it no longer replicates;
 *       {@code leader} (the view log's leader as this node knows it, or null), {@code term} and {@code index} (the
 *       last log entry this node applied), and {@code lost}: the members a recovery of this node's view log declared
 *       lost that are still to be removed (an empty list but on a recovered node).</li>
 *   <li>{@code GET /actuator/cluster/status}: the same document with {@code "self"} (this node's URL) and each member
 *       described further ({@link MemberStatus}): {@code "up"}, {@code "records"}, {@code "bytes"},
 *       {@code "ownership"}, {@code "hints"}, {@code "role"}; it asks every other member for its figures, so it answers
 *       within {@link MemberStatus#PROBE_TIMEOUT} when one is down. The operator's {@code dht status} reads it.</li>
 *   <li>{@code POST /actuator/cluster/decommission} (optional {@code {"node": URL}}, default the receiving node),
 *       {@code POST /actuator/cluster/removenode} with {@code {"node": URL}}, {@code POST /actuator/cluster/abort},
 *       each on any member: 202 with the view once the view log took the change's first step, the rest runs in the
 *       background on the log's leader; 409 with {@code {"error": reason}} when refused (a member down, another
 *       change, cleanup pending, no log leader), 400 for an unknown action or a missing node.</li>
 * </ul>
 * Write operations need the cluster secret ({@code dev.dht.web.ActuatorSecretGuard}, 403 without it). The write
 * operations answer once the view log took the first step (at most {@link #ANSWER_TIMEOUT}); they never block.
 */
@Endpoint(id = "cluster")
public class ClusterEndpoint {
    /** Longest wait for a change's first step before the answer. */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
    private final Membership membership;
    private final ChangeProcedure procedure;
    private final RecordStreaming streaming;
    private final OwnershipCleanup cleanup;
    private final ViewLog viewLog;
    private final MemberStatus memberStatus;

    public ClusterEndpoint(Membership membership, ChangeProcedure procedure, RecordStreaming streaming,
                           OwnershipCleanup cleanup, ViewLog viewLog, MemberStatus memberStatus) {
        this.membership = membership;
        this.memberStatus = memberStatus;
        this.viewLog = viewLog;
        this.procedure = procedure;
        this.streaming = streaming;
        this.cleanup = cleanup;
    }

    /** The view, as described above. Never blocks. */
    @ReadOperation
    public Map<String, Object> view() {
        return describe(membership.view());
    }

    /**
     * {@code GET /actuator/cluster/status}, as described above; 404 for another part. Never blocks.
     *
     * @param part {@code status}
     */
    @ReadOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> part(@Selector String part) {
        if (!part.equals("status")) {
            return Mono.just(error("unknown part '" + part + "' (status)", WebEndpointResponse.STATUS_NOT_FOUND));
        }
        ClusterView view = membership.view();
        return memberStatus.rows(view).map(rows -> {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("self", membership.self().toString());
            answer.putAll(describe(view));
            answer.put("members", rows);
            return new WebEndpointResponse<>(answer, 200);
        });
    }

    /**
     * Starts ({@code decommission}, {@code removenode}) or aborts a change, as described above.
     *
     * @param action decommission, removenode or abort
     * @param node   the node to remove (removenode), or to decommission (optional: the receiving node)
     */
    @WriteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> change(@Selector String action, @Nullable String node) {
        Mono<ClusterView> started;
        try {
            started = switch (action) {
                case "decommission" -> procedure.decommission(node == null || node.isBlank() ? null : parse(node));
                case "abort" -> procedure.abort();
                case "removenode" -> procedure.removenode(parse(node));
                default -> throw new IllegalArgumentException("unknown action '" + action
                        + "' (decommission, removenode with {\"node\": URL}, abort)");
            };
        } catch (IllegalArgumentException e) {
            return Mono.just(error(e.getMessage(), WebEndpointResponse.STATUS_BAD_REQUEST));
        }
        return started
                .timeout(ANSWER_TIMEOUT)
                .map(view -> new WebEndpointResponse<>(describe(view), 202))
                .onErrorResume(ChangeRefusedException.class, refused -> Mono.just(error(refused.getMessage(), 409)));
    }

    private static WebEndpointResponse<Map<String, Object>> error(String message, int status) {
        return new WebEndpointResponse<>(Map.of("error", message), status);
    }

    private static URI parse(String node) {
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("removenode needs {\"node\": URL}");
        }
        URI uri = URI.create(node);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("node " + node + " is not a URL");
        }
        return uri;
    }

    private Map<String, Object> describe(ClusterView view) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("epoch", view.epoch());
        answer.put("cluster", view.cluster().toString());
        answer.put("replicationFactor", view.replicationFactor());
        answer.put("members", view.members().stream()
                .map(member -> Map.of("node", member.node().toString(), "state", member.state().name()))
                .toList());
        ClusterChange change = view.change();
        if (change == null) {
            answer.put("change", null);
        } else {
            Map<String, Object> described = new LinkedHashMap<>();
            described.put("kind", change.kind().token());
            described.put("node", change.node().toString());
            described.put("phase", change.phase().token());
            described.put("streamed", Map.of("records", streaming.records(), "bytes", streaming.bytes()));
            answer.put("change", described);
        }
        answer.put("cleanupPending", cleanup.isPending());
        answer.put("lost", viewLog.lost().stream().map(URI::toString).sorted().toList());
        answer.put("leader", viewLog.leaderNode().map(URI::toString).orElse(null));
        answer.put("term", viewLog.term());
        answer.put("index", viewLog.appliedIndex());
        return answer;
    }
}
