package dev.dht.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The Timer {@code dht.client.requests} of client requests of the v0 API (Prometheus
 * {@code dht_client_requests_seconds_*}) with tags {@code operation} (get, put, delete, other, range, status; see
 * {@link #operationOf}) and {@code status} (the HTTP status code of the answer), as a percentile histogram for
 * p50/p99/p99.9 in Prometheus.
 *
 * <p>The timing itself is done in the Netty pipeline, by {@link dev.dht.admission.AdmissionHandler}: from when
 * Netty reads the request head to when the answer's head (status line and headers) is written, in ns, so error
 * answers written by the error handler and the handler's own 503 refusals are included; for a range it is the time
 * to the first bytes of the answer. A request whose connection closes before its answer's head is written is not
 * counted. Only on a management port of its own, which has no {@code AdmissionHandler} and answers v0 requests
 * 400, does {@link dev.dht.web.ActuatorOnlyFilter} count them, to their answer's commit.
 * Non-blocking.
 *
 * <p>Each timer is registered on its first use and then found by operation and status code in an array, not
 * by a key built per request: the lookup allocates nothing.
 */
public final class ClientRequestMetrics {
    /** Status codes whose timers are kept in {@link #timers}; a timer of any other is looked up in the registry. */
    private static final int FIRST_STATUS = 100;
    private static final int STATUSES = 500;

    private final MeterRegistry registry;
    /** The timers by operation ({@link #operationIndex}) and status code, each filled on its first use. */
    private final AtomicReferenceArray<Timer> timers = new AtomicReferenceArray<>(6 * STATUSES);

    public ClientRequestMetrics(MeterRegistry registry) {
        this.registry = registry;
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
     * Counts one answered client request. Non-blocking; allocates nothing once the timer of {@code operation} and
     * {@code status} exists.
     *
     * @param operation as {@link #operationOf}, not null
     * @param status    the HTTP status code of the answer
     * @param nanos     time from reading the request head to writing the answer's head, in ns
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
        return operationOf(method, path, 0, path.length());
    }

    /**
     * As {@link #operationOf(String, String)} for the path {@code text[from, to)}, e.g. the path within a request
     * target, without copying it out.
     *
     * @param method the HTTP method, e.g. "GET"
     * @param text   text holding the request path
     * @param from   index of the path's first character in {@code text}
     * @param to     index after the path's last character (of its {@code ?}, if a query follows)
     */
    public static String operationOf(String method, String text, int from, int to) {
        if (isPath(text, from, to, "/v0/entity")) {
            return switch (method) {
                case "GET" -> "get";
                case "PUT" -> "put";
                case "DELETE" -> "delete";
                default -> "other";
            };
        }
        if (isPath(text, from, to, "/v0/entities")) {
            return "range";
        }
        return isPath(text, from, to, "/v0/status") ? "status" : null;
    }

    private static boolean isPath(String text, int from, int to, String path) {
        return to - from == path.length() && text.startsWith(path, from);
    }
}
