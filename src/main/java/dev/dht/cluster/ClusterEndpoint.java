package dev.dht.cluster;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * Actuator endpoint {@code cluster}: {@code GET /actuator/cluster} answers this node's {@link ClusterView} as JSON,
 * {@code {"epoch": 1, "replicationFactor": 3, "members": [{"node": "http://host:port", "state": "NORMAL"}, ...],
 * "change": null}}; {@code change} is the membership change in progress, none while membership is fixed at
 * start. Never blocks.
 */
@Endpoint(id = "cluster")
public class ClusterEndpoint {
    private final ClusterView view;

    /** The endpoint over {@code view}. */
    public ClusterEndpoint(ClusterView view) {
        this.view = view;
    }

    /** The view, as described above. */
    @ReadOperation
    public Map<String, Object> view() {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("epoch", view.epoch());
        answer.put("replicationFactor", view.replicationFactor());
        answer.put("members", view.members().stream()
                .map(member -> Map.of("node", member.node().toString(), "state", member.state().name()))
                .toList());
        answer.put("change", null);
        return answer;
    }
}
