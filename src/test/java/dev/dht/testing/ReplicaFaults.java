package dev.dht.testing;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.http.HttpStatus;
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
    private final Map<String, HttpStatus> answers = new ConcurrentHashMap<>();
    private final Map<String, Duration> answerDelays = new ConcurrentHashMap<>();

    /** Delays calls to the peer with base URL {@code peer} by {@code delay} before sending them. */
    public void delayCallsTo(URI peer, Duration delay) {
        delays.put(authority(peer), delay);
    }

    /** Answers calls to the peer with base URL {@code peer} with {@code status} and no body, without sending them. */
    public void answerCallsTo(URI peer, HttpStatus status) {
        answers.put(authority(peer), status);
    }

    /**
     * Delays the answers of the peer with base URL {@code peer} by {@code delay} after they arrived, so that each
     * call completes that much later for its caller. The pooled connection may already be free again (an answer
     * without a body gives it back when it arrives); to hold the connection, use
     * {@link ServerFaults#delayReplicaRequests} on the peer.
     */
    public void delayAnswersFrom(URI peer, Duration delay) {
        answerDelays.put(authority(peer), delay);
    }

    /** Removes all faults. */
    public void clear() {
        delays.clear();
        answers.clear();
        answerDelays.clear();
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        HttpStatus answer = answers.get(authority(request.url()));
        if (answer != null) {
            return Mono.just(ClientResponse.create(answer).build());
        }
        Duration delay = delays.get(authority(request.url()));
        Mono<ClientResponse> exchange = delay == null ? next.exchange(request) : Mono.delay(delay).then(next.exchange(request));
        Duration answerDelay = answerDelays.get(authority(request.url()));
        return answerDelay == null ? exchange : exchange.delayElement(answerDelay);
    }

    private static String authority(URI uri) {
        return uri.getHost() + ":" + uri.getPort();
    }
}
