package dev.dht.config;

import dev.dht.metrics.ClientRequestMetrics;
import dev.dht.web.ActuatorOnlyFilter;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.web.server.ConfigurableWebServerFactory;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.context.annotation.Bean;

/**
 * The management server's own context, present only when {@code management.server.port} differs from the server
 * port: it serves the actuator and nothing else. Imported by Spring Boot into that child context (listed, as
 * {@link ActuatorSecretConfiguration} is, in
 * {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports}).
 */
@ManagementContextConfiguration(value = ManagementContextType.CHILD, proxyBeanMethods = false)
public class ManagementServerConfiguration {

    /**
     * Paths outside the actuator's base path answer as unknown paths on the management port; v0 requests sent there
     * are counted in {@code dht.client.requests} (the application context's {@link ClientRequestMetrics}).
     */
    @Bean
    ActuatorOnlyFilter actuatorOnlyFilter(WebEndpointProperties web, ClientRequestMetrics metrics) {
        return new ActuatorOnlyFilter(web.getBasePath(), metrics);
    }

    /**
     * With TLS on ({@code dht.tls.bundle}), the management port serves HTTPS with the same bundle (reloaded with
     * it), so the cluster secret of the actuator's write operations never travels in clear. It asks for client
     * certificates at most ({@code want}), never requires one: kubelet probes and Prometheus present none, and reads
     * need no credential. A verified cluster certificate stands in for the secret on writes. Runs after Spring
     * Boot's own customizer, which would apply {@code management.server.ssl.*}.
     */
    @Bean
    WebServerFactoryCustomizer<ConfigurableWebServerFactory> managementTls(TlsConfiguration.TlsSettings tls,
                                                                           SslBundles bundles) {
        return factory -> {
            if (tls.enabled()) {
                Ssl.ClientAuth asked = tls.properties().clientAuth() == Ssl.ClientAuth.NONE
                        ? Ssl.ClientAuth.NONE : Ssl.ClientAuth.WANT;
                factory.setSsl(tls.ssl(asked));
                factory.setSslBundles(bundles);
            }
        };
    }
}
