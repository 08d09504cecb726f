package dev.dht.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.openhft.hashing.LongHashFunction;

/**
 * Deterministic replica placement by rendezvous (highest random weight) hashing: Thaler and Ravishankar,
 * "Using Name-Based Mappings to Increase Hit Rates", IEEE/ACM ToN 1998.
 *
 * <p>For a key every node gets the weight {@code xxh3_64(key, seed = xxh3_64(node URL))}; the preference list
 * is all nodes by descending weight (unsigned), ties broken by configuration order. The replicas for
 * {@code from} are the first {@code from} entries, so a smaller {@code from} is always a prefix of a larger
 * one, and adding or removing a node moves only the keys for which that node is or becomes a replica.
 *
 * <p>Pure computation: thread-safe, never blocks, allocates only the returned list.
 */
public final class ShardRouter {
    private final List<Node> nodes;
    private final LongHashFunction[] nodeHashes;

    /** The router of {@code nodes}, in configuration order (which breaks ties). */
    public ShardRouter(List<Node> nodes) {
        this.nodes = List.copyOf(nodes);
        this.nodeHashes = nodes.stream()
                .map(node -> LongHashFunction.xx3(LongHashFunction.xx3().hashChars(node.url().toString())))
                .toArray(LongHashFunction[]::new);
    }

    /** All nodes ordered by preference for {@code key} (UTF-8 bytes of the id). */
    public List<Node> preferenceList(byte[] key) {
        int n = nodes.size();
        long[] weights = new long[n];
        Node[] order = new Node[n];
        for (int i = 0; i < n; i++) {
            long weight = nodeHashes[i].hashBytes(key);
            // insertion sort by descending unsigned weight (n is a handful); equal weights keep config order
            int at = i;
            while (at > 0 && Long.compareUnsigned(weights[at - 1], weight) < 0) {
                weights[at] = weights[at - 1];
                order[at] = order[at - 1];
                at--;
            }
            weights[at] = weight;
            order[at] = nodes.get(i);
        }
        return Arrays.asList(order);
    }

    /**
     * The {@code from} replicas of {@code key}: the first {@code from} nodes of its preference list.
     *
     * @throws IllegalArgumentException if {@code from} is not in {@code [1, n]}
     */
    public List<Node> replicas(byte[] key, int from) {
        if (from < 1 || from > nodes.size()) {
            throw new IllegalArgumentException("from must be in [1, " + nodes.size() + "], was " + from);
        }
        return preferenceList(key).subList(0, from);
    }

    /** Convenience for ids: {@link #replicas(byte[], int)} over the id's UTF-8 bytes. */
    public List<Node> replicas(String id, int from) {
        return replicas(id.getBytes(StandardCharsets.UTF_8), from);
    }
}
