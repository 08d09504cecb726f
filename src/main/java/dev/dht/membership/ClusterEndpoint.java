package dev.dht.membership;

import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
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
 *   <li>{@code GET /actuator/cluster}: {@code {"epoch": 7, "replicationFactor": 3, "members": [{"node": URL,
 *       "state": "NORMAL"}, ...], "change": null}}; while a change runs, {@code change} is {@code {"kind": "join",
 *       "node": URL, "phase": "streaming", "streamed": {"records": N, "bytes": N}}} (what this node stored from
 *       streams), and {@code cleanupPending} says whether this node still drops records it no longer replicates.</li>
 *   <li>{@code POST /actuator/cluster/decommission} (on the leaving node), {@code POST /actuator/cluster/removenode}
 *       with {@code {"node": URL}} (on any member), {@code POST /actuator/cluster/abort}: 202 with the view once the
 *       change's first step is taken, the rest runs in the background; 409 with {@code {"error": reason}} when refused
 *       (a member down, another change, cleanup pending), 400 for an unknown action or a missing node.</li>
 * </ul>
 * Write operations need the cluster secret ({@code dev.dht.web.ActuatorSecretGuard}, 403 without it). The write
 * operations answer once the claimant took the first step (at most {@link #ANSWER_TIMEOUT}); they never block.
 */
@Endpoint(id = "cluster")
public class ClusterEndpoint {
    /** Longest wait for a change's first step before the answer. */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
    private final Membership membership;
    private final ChangeProcedure procedure;
    private final RecordStreaming streaming;
    private final OwnershipCleanup cleanup;

    public ClusterEndpoint(Membership membership, ChangeProcedure procedure, RecordStreaming streaming,
                           OwnershipCleanup cleanup) {
        this.membership = membership;
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
     * Starts ({@code decommission}, {@code removenode}) or aborts a change, as described above.
     *
     * @param action decommission, removenode or abort
     * @param node   the node to remove (removenode only)
     */
    @WriteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> change(@Selector String action, @Nullable String node) {
        Mono<ClusterView> started;
        try {
            started = switch (action) {
                case "decommission" -> procedure.decommission();
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
        return answer;
    }
}
