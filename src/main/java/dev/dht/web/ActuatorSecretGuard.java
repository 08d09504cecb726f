package dev.dht.web;

import dev.dht.http.ClientCertificate;
import dev.dht.peer.InternalProtocol;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.HttpHandlerDecoratorFactory;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
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
 *
 * <p>A decorator of the context's {@link HttpHandler}, not a {@code WebFilter}: Spring's {@code DefaultWebFilterChain}
 * wraps each WebFilter call in a checkpoint (a string built, a checkpoint snapshot and an operator per filter per
 * request), and every client request on the server port would pay it for a check that concerns only the actuator;
 * taking a WebFilter off the client requests' path raised a node's GET throughput measurably
 * (docs/performance.md). As an {@link HttpHandlerDecoratorFactory}
 * bean it is applied by {@code WebHttpHandlerBuilder.applicationContext}, which builds the HttpHandler of the
 * application's context and also that of a management server's child context, so it guards the actuator wherever
 * it is served; a client request passes it with a method comparison (or a short loop for a non-GET request) and
 * one extra call. It runs before Spring WebFlux creates the exchange, hence before any WebFilter and outside the
 * WebExceptionHandlers, which a 403 written here does not need.
 */
public final class ActuatorSecretGuard implements HttpHandlerDecoratorFactory {
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
    public ActuatorSecretGuard(List<Operation> writeOperations, String secret) {
        this.writeOperations = List.copyOf(writeOperations);
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code handler} (the context's whole HttpHandler) behind the check. */
    @Override
    public HttpHandler apply(HttpHandler handler) {
        return new Guarded(handler);
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

    private Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response, HttpHandler next) {
        if (HttpMethod.GET.equals(request.getMethod()) || !isWriteOperation(request)) {
            return next.handle(request, response);
        }
        if (!ClientCertificate.isVerified(request.getSslInfo())) {
            if (secret.length == 0) {
                return forbid(response, "actuator write operation: refused, no dht.cluster-secret is set");
            }
            String presented = request.getHeaders().getFirst(InternalProtocol.SECRET_HEADER);
            if (presented == null || !MessageDigest.isEqual(secret, presented.getBytes(StandardCharsets.UTF_8))) {
                return forbid(response, "actuator write operation: missing or wrong cluster secret");
            }
        }
        if (request.getHeaders().getContentType() == null) {
            // a bare `curl -X POST` has no body: read it as JSON, so operations whose parameters are all optional
            // (POST /actuator/cluster/decommission) take it instead of answering 415
            return next.handle(request.mutate()
                    .headers(headers -> headers.setContentType(MediaType.APPLICATION_JSON))
                    .build(), response);
        }
        return next.handle(request, response);
    }

    private static Mono<Void> forbid(ServerHttpResponse response, String message) {
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** The decorated HttpHandler: the check, then {@code delegate}. */
    private final class Guarded implements HttpHandler {
        private final HttpHandler delegate;

        Guarded(HttpHandler delegate) {
            this.delegate = delegate;
        }

        @Override
        public Mono<Void> handle(ServerHttpRequest request, ServerHttpResponse response) {
            return ActuatorSecretGuard.this.handle(request, response, delegate);
        }

        @Override
        public String toString() {
            return "ActuatorSecretGuard [delegate=" + delegate + "]";
        }
    }
}
