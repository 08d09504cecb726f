package dev.dht.config;

import dev.dht.web.ActuatorSecretGuard;
import java.util.List;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.web.EndpointMapping;
import org.springframework.boot.actuate.endpoint.web.WebEndpointsSupplier;
import org.springframework.boot.actuate.endpoint.web.WebOperationRequestPredicate;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The secret check of the actuator's write operations, in the context that serves the actuator: the application's
 * own when the actuator shares the server port, the management child context (its own web server) when
 * {@code management.server.port} differs. Spring Boot imports this class into the right one because
 * {@code META-INF/spring/org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration.imports}
 * lists it; {@link dev.dht.DhtApplication} keeps it out of component scanning, which would put it in the
 * application's context either way. Either context builds its HttpHandler with
 * {@code WebHttpHandlerBuilder.applicationContext}, which applies the check (an
 * {@link org.springframework.http.server.reactive.HttpHandlerDecoratorFactory}) around it; with the actuator on a
 * port of its own, the server port has no check to pass.
 */
@ManagementContextConfiguration(proxyBeanMethods = false)
public class ActuatorSecretConfiguration {

    /** The check over every write and delete operation of the endpoints exposed over HTTP. */
    @Bean
    ActuatorSecretGuard actuatorSecretGuard(WebEndpointsSupplier endpoints, WebEndpointProperties web,
                                            DhtProperties properties) {
        EndpointMapping mapping = new EndpointMapping(web.getBasePath());
        List<ActuatorSecretGuard.Operation> writes = endpoints.getEndpoints().stream()
                .flatMap(endpoint -> endpoint.getOperations().stream())
                .filter(operation -> operation.getType() != OperationType.READ)
                .map(operation -> {
                    WebOperationRequestPredicate request = operation.getRequestPredicate();
                    return new ActuatorSecretGuard.Operation(HttpMethod.valueOf(request.getHttpMethod().name()),
                            PathPatternParser.defaultInstance.parse(mapping.createSubPath(request.getPath())));
                })
                .toList();
        return new ActuatorSecretGuard(writes, properties.clusterSecret());
    }
}
