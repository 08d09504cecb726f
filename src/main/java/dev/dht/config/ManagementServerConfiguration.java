package dev.dht.config;

import dev.dht.web.ActuatorOnlyFilter;
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

    /** Paths outside the actuator's base path answer as unknown paths on the management port. */
    @Bean
    ActuatorOnlyFilter actuatorOnlyFilter(WebEndpointProperties web) {
        return new ActuatorOnlyFilter(web.getBasePath());
    }
}
