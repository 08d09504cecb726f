package dev.dht.cluster;

import java.net.URI;

/**
 * One member of the cluster, identified by its base URL as listed in {@code dht.nodes}.
 *
 * @param url  base URL, e.g. {@code http://dht-0.dht:8080}
 * @param self true for the node this process runs
 */
public record Node(URI url, boolean self) {
    /** Short name for logs and metric tags: host:port. */
    public String name() {
        return url.getHost() + ":" + url.getPort();
    }

    @Override
    public String toString() {
        return name();
    }
}
