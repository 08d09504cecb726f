package dev.dht.config;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.web.server.Ssl;

/**
 * TLS settings, prefix {@code dht.tls} (environment variables {@code DHT_TLS_BUNDLE}, {@code DHT_TLS_CLIENT_AUTH}).
 * How to turn it on: docs/operations.md, "TLS".
 *
 * @param bundle     name of a Spring Boot SSL bundle ({@code spring.ssl.bundle.pem.NAME.*} or {@code jks.NAME.*}):
 *                   its key and certificate serve HTTPS on the server port (and the management port) and are this
 *                   node's client certificate towards peers; its trust store holds the cluster's CA, which peers'
 *                   certificates must chain to. Empty: plain HTTP
 * @param clientAuth whether the server port asks for client certificates: {@code none}, {@code want}

 *                   (verified if presented) or {@code need} (mutual TLS: a connection without a certificate from
 *                   the cluster's CA is refused in the handshake). A verified client certificate stands in for the
 *                   cluster secret on {@code /internal/*} and the actuator's write operations
 */
@ConfigurationProperties("dht.tls")
public record TlsProperties(@DefaultValue("") String bundle, @DefaultValue("none") Ssl.ClientAuth clientAuth) {

    /** Checks that client authentication is asked for only with a bundle. */
    public TlsProperties {
        if (!enabled(bundle) && clientAuth != Ssl.ClientAuth.NONE) {
            throw new InvalidSettingException("dht.tls.client-auth",
                    "is " + clientAuth.name().toLowerCase(java.util.Locale.ROOT) + " but TLS is off: set dht.tls.bundle too");
        }
    }

    /** Whether TLS is on: a bundle is named. */
    public boolean enabled() {
        return enabled(bundle);
    }

    private static boolean enabled(String bundle) {
        return bundle != null && !bundle.isBlank();
    }
}
