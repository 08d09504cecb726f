package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Rendezvous placement over three nodes: each node is the first replica of about a third of random keys, a key's
 * replicas for a smaller {@code from} are the first of those for a larger one, every node computes the same
 * replicas, and a {@code from} larger than the cluster is refused.
 */
class ShardRouterTest {
    private static final List<URI> NODES = List.of(
            URI.create("http://dht-0.dht:8080"), URI.create("http://dht-1.dht:8080"), URI.create("http://dht-2.dht:8080"));

    private static ShardRouter routerOf(int self) {
        return new ShardRouter(new ClusterTopology(NODES.get(self), NODES).nodes());
    }

    @Test
    void eachNodeIsFirstReplicaForAThirdOfRandomIds() {
        ShardRouter router = routerOf(0);
        int[] first = new int[NODES.size()];
        Random random = new Random(42);
        int ids = 100_000;
        for (int i = 0; i < ids; i++) {
            String id = Long.toHexString(random.nextLong()) + "-" + i;
            first[NODES.indexOf(router.replicas(id, 1).get(0).url())]++;
        }
        for (int count : first) {
            assertThat(count / (double) ids).isBetween(0.31, 0.35);
        }
    }

    @Test
    void smallerFromIsAPrefixOfLargerFrom() {
        ShardRouter router = routerOf(1);
        for (int i = 0; i < 1000; i++) {
            String id = "key" + i;
            List<Node> all = router.replicas(id, 3);
            assertThat(all).doesNotHaveDuplicates();
            assertThat(router.replicas(id, 2)).isEqualTo(all.subList(0, 2));
            assertThat(router.replicas(id, 1)).isEqualTo(all.subList(0, 1));
        }
    }

    @Test
    void everyNodeComputesTheSamePlacement() {
        ShardRouter a = routerOf(0);
        ShardRouter b = routerOf(2);
        for (int i = 0; i < 1000; i++) {
            String id = "id-" + i;
            assertThat(a.replicas(id, 3).stream().map(Node::url).toList())
                    .isEqualTo(b.replicas(id, 3).stream().map(Node::url).toList());
        }
    }

    @Test
    void fromOutsideTheClusterIsRejected() {
        ShardRouter router = routerOf(0);
        assertThatThrownBy(() -> router.replicas("k", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> router.replicas("k", 4)).isInstanceOf(IllegalArgumentException.class);
    }
}
