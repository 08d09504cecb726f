package dev.dht.web;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
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
 * Never blocks.
 */
public final class ActuatorOnlyFilter implements WebFilter, Ordered {
    private final String basePath;

    /** Lets through {@code basePath} (e.g. {@code /actuator}) and the paths below it. */
    public ActuatorOnlyFilter(String basePath) {
        this.basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        if (basePath.isEmpty() || path.equals(basePath) || path.startsWith(basePath + "/")) {
            return chain.filter(exchange);
        }
        return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND));
    }

    /** Before the secret check ({@link ActuatorSecretFilter}). */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 1;
    }
}
