package dev.dht.cluster;

import java.net.URI;
import java.util.Objects;

/**
 * One member of a {@link ClusterView}: a node by its base URL, and its state.
 *
 * @param node  base URL, as in {@code dht.nodes} (e.g. {@code http://dht-0.dht:8080})
 * @param state where it stands in the membership
 */
public record Member(URI node, MemberState state) {

    /** @throws NullPointerException if either part is null */
    public Member {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(state, "state");
    }
}
