package dev.dht.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Times client requests of the v0 API as Timer {@code dht.client.requests} (Prometheus
 * {@code dht_client_requests_seconds_*}) with tags {@code operation} (get, put, delete, range, status, other)
 * and {@code status} (the HTTP status code), as a percentile histogram for p50/p99/p99.9 in Prometheus.
 *
 * <p>The time is taken when the response is committed, so it includes error answers written by the error
 * handler; for a range it is the time to the first byte. Non-blocking.
 *
 * <p>Each timer is registered on its first use and then found by operation and status code in an array, not
 * by a key built per request: the lookup allocates nothing.
 */
public final class ClientRequestMetrics implements WebFilter, Ordered {
    /** Status codes whose timers are kept in {@link #timers}; a timer of any other is looked up in the registry. */
    private static final int FIRST_STATUS = 100;
    private static final int STATUSES = 500;

    private final MeterRegistry registry;
    /** The timers by operation ({@link #operationIndex}) and status code, each filled on its first use. */
    private final AtomicReferenceArray<Timer> timers = new AtomicReferenceArray<>(6 * STATUSES);

    public ClientRequestMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String operation = operationOf(exchange.getRequest().getMethod().name(), exchange.getRequest().getPath().value());
        if (operation == null) {
            return chain.filter(exchange);
        }
        long started = System.nanoTime();
        exchange.getResponse().beforeCommit(() -> {
            HttpStatusCode status = exchange.getResponse().getStatusCode();
            record(operation, status == null ? 200 : status.value(), System.nanoTime() - started);
            return Mono.empty();
        });
        return chain.filter(exchange);
    }

    /** First of all filters, so that requests refused by later filters are counted too. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    private Timer timer(String operation, int status) {
        int operationIndex = operationIndex(operation);
        if (operationIndex < 0 || status < FIRST_STATUS || status >= FIRST_STATUS + STATUSES) {
            return register(operation, status);
        }
        int slot = operationIndex * STATUSES + status - FIRST_STATUS;
        Timer timer = timers.get(slot);
        if (timer == null) {
            // two threads registering at once get the same meter: the registry keeps one per name and tags
            timer = register(operation, status);
            timers.set(slot, timer);
        }
        return timer;
    }

    private static int operationIndex(String operation) {
        return switch (operation) {
            case "get" -> 0;
            case "put" -> 1;
            case "delete" -> 2;
            case "other" -> 3;
            case "range" -> 4;
            case "status" -> 5;
            default -> -1;
        };
    }

    private Timer register(String operation, int status) {
        return Timer.builder("dht.client.requests")
                .description("Client requests of the v0 API, time to response commit")
                .tag("operation", operation)
                .tag("status", Integer.toString(status))
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
    }

    /**
     * Counts one answered client request that did not pass through this filter (one refused in the Netty
     * pipeline, {@link dev.dht.admission.AdmissionHandler}). Non-blocking.
     *
     * @param operation as {@link #operationOf}
     * @param status    the HTTP status code
     * @param nanos     time from reading the request to its answer, in ns
     */
    public void record(String operation, int status, long nanos) {
        timer(operation, status).record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The {@code operation} tag of a request: get, put, delete or other on {@code /v0/entity}, range on
     * {@code /v0/entities}, status on {@code /v0/status}; null for other paths (not timed).
     *
     * @param method the HTTP method, e.g. "GET"
     * @param path   the request path without its query
     */
    public static String operationOf(String method, String path) {
        if ("/v0/entity".equals(path)) {
            return switch (method) {
                case "GET" -> "get";
                case "PUT" -> "put";
                case "DELETE" -> "delete";
                default -> "other";
            };
        }
        if ("/v0/entities".equals(path)) {
            return "range";
        }
        return "/v0/status".equals(path) ? "status" : null;
    }
}
