package dev.dht.cluster;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's one failure detector: what it last saw of each peer, up or down, and when the peer last answered.
 * Replica calls, the membership's calls and its liveness probes (every member probes every other one it has not
 * heard from for a second, whichever node leads the view log) report their outcome here; requests rank replicas by
 * it and the view log's leader rolls back a change whose member has been silent for
 * {@code dht.change-failure-timeout}. A change of state is logged once (WARN when a peer goes down, INFO when it
 * comes back), not once per request.
 *
 * <p>Thread-safe, non-blocking; called from event loops.
 */
public final class PeerHealth {
    private static final Logger log = LoggerFactory.getLogger(PeerHealth.class);

    private final LongSupplier nanoTime;
    private final Map<Node, Boolean> up = new ConcurrentHashMap<>();
    /** Time (of {@link #nanoTime}) of the first failure since the peer was last up, for peers seen down. */
    private final Map<Node, Long> downSinceNanos = new ConcurrentHashMap<>();
    /** Time of the peer's last answer, or of when this node first asked about it if it never answered. */
    private final Map<URI, Long> lastSeenNanos = new ConcurrentHashMap<>();

    /** A failure detector on {@link System#nanoTime}. */
    public PeerHealth() {
        this(System::nanoTime);
    }

    /** @param nanoTime a monotonic time in ns (a settable one in tests) */
    public PeerHealth(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** Records a successful exchange with {@code peer} (any answer: it runs). */
    public void succeeded(Node peer) {
        Boolean previous = up.put(peer, Boolean.TRUE);
        downSinceNanos.remove(peer);
        lastSeenNanos.put(peer.url(), nanoTime.getAsLong());
        if (Boolean.FALSE.equals(previous)) {
            log.info("peer {} is UP again", peer);
        }
    }

    /** Records a failed exchange (connect error, timeout, 5xx) with {@code peer}. */
    public void failed(Node peer, Throwable cause) {
        Boolean previous = up.put(peer, Boolean.FALSE);
        downSinceNanos.putIfAbsent(peer, nanoTime.getAsLong());
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
        return since == null ? Duration.ZERO : Duration.ofNanos(nanoTime.getAsLong() - since);
    }

    /**
     * How long {@code peer} has not answered: since its last answer, or, if it never answered, since this node first
     * asked (its start-up, as the probes ask about every member at once); {@link Duration#ZERO} for this node itself.
     * No leader, view or change resets it: only an answer of the peer does.
     */
    public Duration silentFor(Node peer) {
        if (peer.self()) {
            return Duration.ZERO;
        }
        long now = nanoTime.getAsLong();
        return Duration.ofNanos(now - lastSeenNanos.computeIfAbsent(peer.url(), unseen -> now));
    }
}
