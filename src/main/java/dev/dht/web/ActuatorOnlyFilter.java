package dev.dht.web;

import dev.dht.metrics.ClientRequestMetrics;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Keeps a management server (the actuator on {@code management.server.port}) to the actuator: any path outside its
 * base path answers as an unknown path does (400, {@link ErrorResponseHandler}). Without it the management port would
 * also serve the v0 API and {@code /internal/*}, as Spring WebFlux's management child context finds the
 * application's routes in its parent, and those requests would pass by the server port's admission control.
 *
 * <p>A client request of the v0 API sent here (normally refused) is counted in {@code dht.client.requests}
 * ({@link ClientRequestMetrics}) with its answer's status, timed from here to the answer's commit in ns: the
 * management server has no {@code AdmissionHandler}, which times client requests on the server port (Spring Boot
 * does not apply the application's Netty customizers to it). Actuator requests are not timed. Never blocks.
 */
public final class ActuatorOnlyFilter implements WebFilter, Ordered {
    private final String basePath;
    private final ClientRequestMetrics metrics;

    /**
     * Lets through {@code basePath} (e.g. {@code /actuator}) and the paths below it.
     *
     * @param metrics where v0 requests sent to the management port are counted
     */
    public ActuatorOnlyFilter(String basePath, ClientRequestMetrics metrics) {
        this.basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
        this.metrics = metrics;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        timeClientRequest(exchange);
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        if (basePath.isEmpty() || path.equals(basePath) || path.startsWith(basePath + "/")) {
            return chain.filter(exchange);
        }
        return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND));
    }

    /** Times a v0 request (no other path) until its answer is committed, with the answer's status. */
    private void timeClientRequest(ServerWebExchange exchange) {
        ServerHttpRequest request = exchange.getRequest();
        String operation = ClientRequestMetrics.operationOf(request.getMethod().name(), request.getPath().value());
        if (operation == null) {
            return;
        }
        long started = System.nanoTime();
        ServerHttpResponse response = exchange.getResponse();
        response.beforeCommit(() -> {
            HttpStatusCode status = response.getStatusCode();
            metrics.record(operation, status == null ? 200 : status.value(), System.nanoTime() - started);
            return Mono.empty();
        });
    }

    /**
     * Ahead of any other WebFilter. The secret check ({@link ActuatorSecretGuard}) is no WebFilter: it decorates the
     * whole HttpHandler and so runs before this filter, on actuator paths only, which this filter lets through.
     */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 1;
    }
}
