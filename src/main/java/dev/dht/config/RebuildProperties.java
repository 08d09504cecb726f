package dev.dht.config;

import java.net.URI;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Rebuild settings, prefix {@code dht.rebuild} (beside the switch {@code dht.rebuild=true} of
 * {@link DhtProperties#rebuild}; environment variable {@code DHT_REBUILD_ACCEPT_MISSING}). Checked when bound: a
 * wrong one stops start-up with an {@link InvalidSettingException} naming it. What it risks: docs/operations.md,
 * "Rebuild".
 *
 * @param acceptMissing members' base URLs a rebuild may complete without: one of them that does not answer is left
 *                      out instead of asked again until it does, and the node serves once the others streamed their
 *                      records. Writes acknowledged only by the members left out (and not yet repaired to another
 *                      replica) are lost to this node's copy: with {@code from=3} a 2/3 write held by this node's lost
 *                      disk and one missing member reads back only from that member, once it returns. Empty: a
 *                      rebuild waits for every replica of this node's ranges

 */
@ConfigurationProperties("dht.rebuild")
public record RebuildProperties(@DefaultValue List<URI> acceptMissing) {

    /** Checks that each entry is a base URL, listed once. */
    public RebuildProperties {
        acceptMissing = acceptMissing == null ? List.of() : List.copyOf(acceptMissing);
        Set<URI> seen = new HashSet<>();
        for (URI node : acceptMissing) {
            DhtProperties.checkUrl("dht.rebuild.accept-missing", node);
            if (!seen.add(node)) {
                throw new InvalidSettingException("dht.rebuild.accept-missing", "lists " + node + " twice");
            }
        }
    }
}
