package dev.dht.testing;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Fault injection on the replica client of one node (a WebClient filter): delays every call from this node
 * to a chosen peer before it is sent. Registered as a bean in a node's context by {@link InProcessCluster}.
 */
public final class ReplicaFaults implements ExchangeFilterFunction {
    private final Map<String, Duration> delays = new ConcurrentHashMap<>();

    /** Delays calls to the peer with base URL {@code peer} by {@code delay} before sending them. */
    public void delayCallsTo(URI peer, Duration delay) {
        delays.put(authority(peer), delay);
    }

    /** Removes all faults. */
    public void clear() {
        delays.clear();
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        Duration delay = delays.get(authority(request.url()));
        return delay == null ? next.exchange(request) : Mono.delay(delay).then(next.exchange(request));
    }

    private static String authority(URI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }
}
