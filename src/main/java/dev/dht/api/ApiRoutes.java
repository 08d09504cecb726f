package dev.dht.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.dht.cluster.ClusterTopology;
import dev.dht.config.DhtProperties;
import dev.dht.metrics.ClientRequestMetrics;
import dev.dht.repair.RepairScan;
import dev.dht.replication.Coordinator;
import dev.dht.replication.InternalProtocol;
import dev.dht.replication.RangeCoordinator;
import dev.dht.replication.RebuildGate;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.netty.NettyPipeline;

/** The HTTP surface: the public v0 API and the internal replica endpoints, as functional routes. */
@Configuration(proxyBeanMethods = false)
public class ApiRoutes {
    /** Name of the {@link AdmissionHandler} in a connection's pipeline. */
    static final String ADMISSION_HANDLER = "dht.admission";

    @Bean
    ErrorResponseHandler errorResponseHandler() {
        return new ErrorResponseHandler();
    }

    /** Started with the web server's event loops once the server is up, stopped with the context; gauge {@code dht.event.loop.lag}. */
    @Bean(destroyMethod = "stop")
    EventLoopLag eventLoopLag(MeterRegistry registry) {
        EventLoopLag lag = new EventLoopLag();
        lag.bind(registry);
        return lag;
    }

    @Bean
    ApplicationListener<WebServerInitializedEvent> eventLoopLagStarter(EventLoopLag lag, ReactorResourceFactory resources) {
        return event -> lag.start(resources.getLoopResources().onServer(true));
    }

    @Bean
    AdmissionControl admissionControl(DhtProperties properties, EventLoopLag lag) {
        return new AdmissionControl(properties.maxInFlightRequests(), lag, properties.maxEventLoopLag(),
                properties.lagSheddingMinInFlight(),
                new QueueDelay(properties.maxQueueDelay(), QueueDelay.INTERVAL, System::nanoTime));
    }

    /**
     * Puts an {@link AdmissionHandler} into every HTTP/1.1 connection's pipeline, right before Reactor Netty's
     * request handling, so that client requests are admitted or refused (503) before Reactor Netty or WebFlux
     * builds anything for them.
     */
    @Bean
    NettyServerCustomizer admissionHandlerInstaller(AdmissionControl control, ClientRequestMetrics metrics) {
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) -> {
            if (channel.pipeline().get(NettyPipeline.HttpTrafficHandler) == null) {
                throw new IllegalStateException("no " + NettyPipeline.HttpTrafficHandler + " in " + channel.pipeline().names()
                        + ": the admission handler supports HTTP/1.1 only");
            }
            channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, ADMISSION_HANDLER, new AdmissionHandler(control, metrics));
        });
    }

    /**
     * A client that stops sending in the middle of a request body for {@code server.netty.idle-timeout} has its
     * connection closed (Reactor Netty's read timeout; nothing of the request is used), as one that stops in its
     * request head or between requests is closed by the idle timeout itself: a stalled or slowloris client does not
     * hold a connection and an in-flight slot for ever. Answers being written are not affected.
     */
    @Bean
    NettyServerCustomizer requestBodyReadTimeout(@Value("${server.netty.idle-timeout:60s}") Duration timeout) {
        return server -> server.readTimeout(timeout);
    }

    @Bean
    RouterFunction<ServerResponse> v0Routes(DhtProperties properties, Coordinator coordinator, ClusterTopology topology,
                                            RangeCoordinator rangeCoordinator, HealthEndpoint health) {
        int maxValue = (int) properties.maxValueSize().toBytes();
        EntityHandler entity = new EntityHandler(coordinator, topology, new RequestBodyReader(maxValue));
        RangeHandler range = new RangeHandler(rangeCoordinator);
        StatusHandler status = new StatusHandler(health);
        return RouterFunctions.route()
                .GET("/v0/entity", entity::get)
                .PUT("/v0/entity", entity::put)
                .DELETE("/v0/entity", entity::delete)
                .route(path("/v0/entity"), entity::methodNotAllowed)
                .GET("/v0/entities", range::stream)
                .route(path("/v0/entities"), request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                        .allow(HttpMethod.GET).contentType(MediaType.TEXT_PLAIN)
                        .bodyValue("method " + request.method() + " not allowed on /v0/entities\n"))
                .GET("/v0/status", status::status)
                .build();
    }

    @Bean
    RouterFunction<ServerResponse> internalRoutes(DhtProperties properties, LocalStore store, RebuildGate rebuild,
                                                  RepairScan repairScan, ClusterTopology topology) {
        int maxRecord = (int) properties.maxValueSize().toBytes() + Record.MAX_HEADER_BYTES;
        InternalRecordHandler records = new InternalRecordHandler(store, rebuild, new RequestBodyReader(maxRecord));
        InternalRepairHandler repair = new InternalRepairHandler(repairScan, topology);
        return RouterFunctions.route()
                .GET(InternalProtocol.REPAIR_TREE_PATH, repair::tree)
                .GET(InternalProtocol.REPAIR_RECORDS_PATH, repair::records)
                .GET(InternalProtocol.RECORD_PATH, records::read)
                .PUT(InternalProtocol.RECORD_PATH, records::write)
                .POST(InternalProtocol.RECORDS_PATH, records::writeBatch)
                .POST(InternalProtocol.READS_PATH, records::readBatch)
                .GET(InternalProtocol.RANGE_PATH, records::range)
                .filter(new ClusterSecretFilter(properties.clusterSecret()))
                .build();
    }
}
