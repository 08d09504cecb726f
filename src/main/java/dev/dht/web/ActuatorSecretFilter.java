package dev.dht.web;

import dev.dht.peer.InternalProtocol;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Mono;

/**
 * Guards the actuator's write operations ({@code POST /actuator/repair}, and any later one): a request to one of
 * them without the right {@link InternalProtocol#SECRET_HEADER} gets 403 with a one-line text body, as
 * {@code /internal/*} answers. With no secret configured (a single node without {@code dht.cluster-secret}) every
 * write operation is refused. A request over a TLS connection whose client certificate the server verified (the
 * cluster's CA, see {@code dht.tls.client-auth}) passes without the header, as on {@code /internal/*}. Read
 * operations (health, info, prometheus, {@code GET /actuator/cluster}) and paths that are no operation pass
 * untouched, so an unknown path still answers as one. A write operation sent without a {@code Content-Type} is read
 * as JSON (an empty body: no parameters). Compares in constant time; never blocks.
 */
public final class ActuatorSecretFilter implements WebFilter, Ordered {
    private final List<Operation> writeOperations;
    private final byte[] secret;

    /**
     * A write operation: its method and its path pattern, within the application (the actuator's base path
     * included).
     *
     * @param method the HTTP method, {@code POST} or {@code DELETE}
     * @param path   the path, e.g. {@code /actuator/repair}
     */
    public record Operation(HttpMethod method, PathPattern path) {
        boolean matches(ServerHttpRequest request) {
            PathContainer requested = request.getPath().pathWithinApplication();
            return method.equals(request.getMethod()) && path.matches(requested);
        }
    }

    /** Guards {@code writeOperations} with {@code secret} (empty: refuses them all). */
    public ActuatorSecretFilter(List<Operation> writeOperations, String secret) {
        this.writeOperations = List.copyOf(writeOperations);
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    /** Whether {@code request} calls a write operation; a loop, not a stream: every client request passes here. */
    private boolean isWriteOperation(ServerHttpRequest request) {
        for (Operation operation : writeOperations) {
            if (operation.matches(request)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        if (HttpMethod.GET.equals(request.getMethod()) || !isWriteOperation(request)) {
            return chain.filter(exchange);
        }
        if (!ClientCertificate.isVerified(request.getSslInfo())) {
            if (secret.length == 0) {
                return forbid(exchange.getResponse(), "actuator write operation: refused, no dht.cluster-secret is set");
            }
            String presented = request.getHeaders().getFirst(InternalProtocol.SECRET_HEADER);
            if (presented == null || !MessageDigest.isEqual(secret, presented.getBytes(StandardCharsets.UTF_8))) {
                return forbid(exchange.getResponse(), "actuator write operation: missing or wrong cluster secret");
            }
        }
        if (request.getHeaders().getContentType() == null) {
            // a bare `curl -X POST` has no body: read it as JSON, so operations whose parameters are all optional
            // (POST /actuator/cluster/decommission) take it instead of answering 415
            return chain.filter(exchange.mutate()
                    .request(mutated -> mutated.headers(headers -> headers.setContentType(MediaType.APPLICATION_JSON)))
                    .build());
        }
        return chain.filter(exchange);
    }

    /** After {@link ActuatorOnlyFilter} (on a management port of its own). */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 2;
    }

    private static Mono<Void> forbid(ServerHttpResponse response, String message) {
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
