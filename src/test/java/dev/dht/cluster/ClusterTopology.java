package dev.dht.cluster;

import java.net.URI;
import java.util.List;

/**
 * A test fixture: a fixed list of nodes and which one is this process, for tests that build a {@link ShardRouter} or
 * a {@link #membership()} without a cluster view of their own. A running node's membership is its
 * {@link ClusterView} ({@link Membership}), which changes as nodes join and leave.
 */
public final class ClusterTopology {
    private final List<Node> nodes;
    private final Node self;

    /**
     * @throws IllegalArgumentException if {@code self} is not among {@code nodeUrls}
     */
    public ClusterTopology(URI self, List<URI> nodeUrls) {
        this.nodes = nodeUrls.stream().map(url -> new Node(url, url.equals(self))).toList();
        this.self = nodes.stream().filter(Node::self).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("dht.self " + self + " is not among dht.nodes"));
    }

    /** All nodes, self included, in configuration order. */
    public List<Node> nodes() {
        return nodes;
    }

    /** This process's node. */
    public Node self() {
        return self;
    }

    /**
     * A membership of these nodes, all {@code NORMAL}, as {@link #self} sees it, that is never stored; the
     * replication factor is the number of nodes.
     */
    public Membership membership() {
        List<URI> urls = nodes.stream().map(Node::url).toList();
        return new Membership(self.url(), ClusterView.initial(urls, urls.size()), null);
    }

    /** Number of nodes, n; the default replication is {@code (n/2+1)/n}. */
    public int size() {
        return nodes.size();
    }
}
