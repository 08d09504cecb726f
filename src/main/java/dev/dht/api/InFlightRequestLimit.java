package dev.dht.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Admission control for client requests ({@code /v0/*}): at most {@code dht.max-in-flight-requests} are
 * served at once, and none while an event loop stays more than {@code dht.max-event-loop-lag} behind
 * ({@link EventLoopLag#sustainedNanos()}); a request beyond that is answered 503 with {@code Retry-After: 1}
 * at once, before any storage or replica work. Under overload the node thus sheds the excess promptly instead
 * of letting latency and memory grow without bound. The in-flight count sees requests being served; the lag
 * also sees requests still waiting unread in the sockets of a loop that cannot keep up, where an overloaded
 * node queues most. Internal (replica) requests are not limited here: their coordinators' connection pools
 * bound them. Lock-free; runs on the event loop.
 */
public final class InFlightRequestLimit implements WebFilter, Ordered {
    private final int limit;
    private final EventLoopLag lag;
    private final long maxLagNanos;
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * @param limit  requests served concurrently, at least 1
     * @param lag    the event loop lag to watch
     * @param maxLag the lag above which new requests are refused
     */
    public InFlightRequestLimit(int limit, EventLoopLag lag, Duration maxLag) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        this.limit = limit;
        this.lag = lag;
        this.maxLagNanos = maxLag.toNanos();
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith("/v0/")) {
            return chain.filter(exchange);
        }
        long behind = lag.sustainedNanos();
        if (behind > maxLagNanos) {
            return reject(exchange.getResponse(), "event loops " + TimeUnit.NANOSECONDS.toMillis(behind) + " ms behind");
        }
        if (inFlight.incrementAndGet() > limit) {
            inFlight.decrementAndGet();
            return reject(exchange.getResponse(), "more than " + limit + " requests in flight");
        }
        return chain.filter(exchange).doFinally(signal -> inFlight.decrementAndGet());
    }

    /** Client requests being served right now. */
    public int inFlight() {
        return inFlight.get();
    }

    private Mono<Void> reject(ServerHttpResponse response, String reason) {
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        response.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        byte[] body = ("overloaded: " + reason + ", retry later\n").getBytes(StandardCharsets.US_ASCII);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** Runs after the metrics filter (so rejections are counted) and before everything else. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 10;
    }
}
