package dev.dht.testing;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Fault injection on the serving side of one node (a WebFilter, first in the chain): delays the handling of
 * every replica request ({@code /internal/*}) this node receives, so that the caller's connection stays busy
 * until the answer comes, as with a slow peer. Unlike {@link ReplicaFaults#delayAnswersFrom}, which delays an
 * answer after it arrived, this holds the caller's pooled connection for the whole delay. Registered as a bean
 * in a node's context by {@link InProcessCluster}; client requests ({@code /v0/*}) are not affected.
 */
public final class ServerFaults implements WebFilter, Ordered {
    private final AtomicReference<Duration> replicaRequestDelay = new AtomicReference<>();

    /** Delays the handling of every replica request this node receives by {@code delay}. */
    public void delayReplicaRequests(Duration delay) {
        replicaRequestDelay.set(delay);
    }

    /** Removes all faults. */
    public void clear() {
        replicaRequestDelay.set(null);
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        Duration delay = replicaRequestDelay.get();
        if (delay == null || !exchange.getRequest().getPath().value().startsWith("/internal/")) {
            return chain.filter(exchange);
        }
        return Mono.delay(delay).then(chain.filter(exchange));
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
