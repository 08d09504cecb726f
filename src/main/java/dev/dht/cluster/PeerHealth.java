package dev.dht.cluster;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this node last saw of each peer: up or down. Replica calls report their outcome here; a change of
 * state is logged once (WARN when a peer goes down, INFO when it comes back), not once per request.
 *
 * <p>Thread-safe, non-blocking; called from event loops.
 */
public final class PeerHealth {
    private static final Logger log = LoggerFactory.getLogger(PeerHealth.class);

    private final Map<Node, Boolean> up = new ConcurrentHashMap<>();
    /** {@link System#nanoTime} of the first failure since the peer was last up, for peers seen down. */
    private final Map<Node, Long> downSinceNanos = new ConcurrentHashMap<>();

    /** Records a successful exchange with {@code peer}. */
    public void succeeded(Node peer) {
        Boolean previous = up.put(peer, Boolean.TRUE);
        downSinceNanos.remove(peer);
        if (Boolean.FALSE.equals(previous)) {
            log.info("peer {} is UP again", peer);
        }
    }

    /** Records a failed exchange (connect error, timeout, 5xx) with {@code peer}. */
    public void failed(Node peer, Throwable cause) {
        Boolean previous = up.put(peer, Boolean.FALSE);
        downSinceNanos.putIfAbsent(peer, System.nanoTime());
        if (!Boolean.FALSE.equals(previous)) {
            log.warn("peer {} is DOWN: {}", peer, cause.toString());
        }
    }

    /** Registers Gauge {@code dht.peer.up} (1 up, 0 down; tag {@code peer}) for each of {@code peers}. */
    public void bindGauges(Iterable<Node> peers, MeterRegistry registry) {
        for (Node peer : peers) {
            Gauge.builder("dht.peer.up", this, health -> health.isUp(peer) ? 1 : 0)
                    .description("1 if the last exchange with the peer succeeded, else 0")
                    .tag("peer", peer.name())
                    .register(registry);
        }
    }

    /** True unless the last exchange with {@code peer} failed. */
    public boolean isUp(Node peer) {
        return !Boolean.FALSE.equals(up.get(peer));
    }

    /**
     * How long {@code peer} has been down: since the first failed exchange after its last successful one, as this
     * node saw it (since this node started, if it never reached the peer); {@link Duration#ZERO} while it is up.
     */
    public Duration downFor(Node peer) {
        Long since = downSinceNanos.get(peer);
        return since == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - since);
    }
}
