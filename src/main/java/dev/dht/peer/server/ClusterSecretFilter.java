package dev.dht.peer.server;

import dev.dht.http.ClientCertificate;
import dev.dht.peer.InternalProtocol;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Guards the internal endpoints: a request without the right {@link InternalProtocol#SECRET_HEADER} gets
 * 403, so clients cannot write records with forged timestamps. With no secret configured (a single node)
 * every internal request is refused. A request over a TLS connection whose client certificate the server verified
 * (against the trust store of {@code dht.tls.bundle}, the cluster's CA, with {@code dht.tls.client-auth} want or
 * need) passes without the header: mutual TLS authenticates the peer. Compares in constant time; never blocks.
 */
public final class ClusterSecretFilter implements HandlerFilterFunction<ServerResponse, ServerResponse> {
    private final byte[] secret;

    public ClusterSecretFilter(String secret) {
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        String presented = request.headers().firstHeader(InternalProtocol.SECRET_HEADER);
        boolean allowed = ClientCertificate.isVerified(request.exchange().getRequest().getSslInfo())
                || (secret.length > 0 && presented != null
                        && MessageDigest.isEqual(secret, presented.getBytes(StandardCharsets.UTF_8)));
        if (!allowed) {
            return ServerResponse.status(HttpStatus.FORBIDDEN).contentType(MediaType.TEXT_PLAIN)
                    .bodyValue("internal endpoint: missing or wrong cluster secret\n");
        }
        return next.handle(request);
    }
}
