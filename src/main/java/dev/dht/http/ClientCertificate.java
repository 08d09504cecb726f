package dev.dht.http;

import java.security.cert.X509Certificate;
import org.springframework.http.server.reactive.SslInfo;

/**
 * Whether a request came over a TLS connection with a verified client certificate: with {@code dht.tls.client-auth}
 * want or need, the handshake checks a presented certificate against the trust store of {@code dht.tls.bundle} (the
 * cluster's CA) and fails if it does not verify, so one that is there belongs to a peer of this cluster. Stands in
 * for the cluster secret on {@code /internal/*} and the actuator's write operations. Never blocks.
 */
public final class ClientCertificate {

    private ClientCertificate() {
    }

    /** Whether {@code ssl} (a request's {@link SslInfo}, null over plain HTTP) holds a client certificate. */
    public static boolean isVerified(SslInfo ssl) {
        if (ssl == null) {
            return false;
        }
        X509Certificate[] certificates = ssl.getPeerCertificates();
        return certificates != null && certificates.length > 0;
    }
}
