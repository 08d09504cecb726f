package dev.dht.reference;

import java.util.concurrent.ConcurrentHashMap;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A reference for the benchmark, not part of the product: the v0 entity API as a minimal Spring WebFlux app
 * with Spring Boot's defaults, storing values in a map on the heap (no storage, timestamps, replication or
 * metrics). Issue #6 names such an app as the scale for the single node's target; run it as a node with
 * {@code NODE_JAR} (see gatling/README.md). GET answers 200 with the value or 404, PUT 201, DELETE 202,
 * {@code /v0/status} 200; handlers run on the event loops and never block. The map grows with every new key,
 * so long PUT runs need a large heap ({@code --node-heap 4g}).
 */
@SpringBootApplication
public class MinimalWebFluxApp {
    private final ConcurrentHashMap<String, byte[]> values = new ConcurrentHashMap<>();

    public static void main(String[] args) {
        SpringApplication.run(MinimalWebFluxApp.class, args);
    }

    @Bean
    RouterFunction<ServerResponse> routes() {
        return RouterFunctions.route()
                .GET("/v0/status", request -> ServerResponse.ok().build())
                .GET("/v0/entity", request -> {
                    byte[] value = values.get(request.queryParam("id").orElse(""));
                    return value == null ? ServerResponse.notFound().build() : ServerResponse.ok().bodyValue(value);
                })
                .PUT("/v0/entity", request -> DataBufferUtils.join(request.bodyToFlux(DataBuffer.class))
                        .map(buffer -> {
                            byte[] bytes = new byte[buffer.readableByteCount()];
                            buffer.read(bytes);
                            DataBufferUtils.release(buffer);
                            return bytes;
                        })
                        .defaultIfEmpty(new byte[0])
                        .flatMap(bytes -> {
                            values.put(request.queryParam("id").orElse(""), bytes);
                            return ServerResponse.status(201).build();
                        }))
                .DELETE("/v0/entity", request -> {
                    values.remove(request.queryParam("id").orElse(""));
                    return ServerResponse.accepted().build();
                })
                .build();
    }
}
