package dev.dht.config;

import dev.dht.admission.AdmissionControl;
import dev.dht.admission.AdmissionHandler;
import dev.dht.admission.BodyMemory;
import dev.dht.admission.EventLoopLag;
import dev.dht.admission.QueueDelay;
import dev.dht.metrics.ClientRequestMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.NettyPipeline;

/**
 * Admission control wired into the server's Netty pipeline: in-flight limit, request-body bytes in flight,
 * event-loop lag, queue delay.
 */
@Configuration(proxyBeanMethods = false)
public class AdmissionConfiguration {
    /** Name of the {@link AdmissionHandler} in a connection's pipeline. */
    static final String ADMISSION_HANDLER = "dht.admission";

    /**
     * Started with the web server's event loops once the server is up, stopped with the context; gauge
     * {@code dht.event.loop.lag}.
     */
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
    AdmissionControl admissionControl(AdmissionProperties properties, EventLoopLag lag) {
        return new AdmissionControl(properties.maxInFlightRequests(), lag, properties.maxEventLoopLag(),
                properties.lagSheddingMinInFlight(),
                new QueueDelay(properties.maxQueueDelay(), QueueDelay.INTERVAL, System::nanoTime));
    }

    /**
     * The client request-body bytes in flight, at most {@code dht.max-in-flight-bytes}; gauge
     * {@code dht.admission.body.bytes} (bytes reserved now).
     */
    @Bean
    BodyMemory bodyMemory(AdmissionProperties properties, MeterRegistry registry) {
        BodyMemory memory = new BodyMemory(properties.maxInFlightBytes().toBytes(), properties.maxValueSize().toBytes());
        Gauge.builder("dht.admission.body.bytes", memory, BodyMemory::inFlightBytes)
                .description("Client request-body bytes in flight (at most dht.max-in-flight-bytes)")
                .baseUnit("bytes")
                .register(registry);
        return memory;
    }

    /** The timers of {@code dht.client.requests}; the {@link AdmissionHandler} of every connection times client requests. */
    @Bean
    ClientRequestMetrics clientRequestMetrics(MeterRegistry registry) {
        return new ClientRequestMetrics(registry);
    }

    /**
     * Puts an {@link AdmissionHandler} into every HTTP/1.1 connection's pipeline, right before Reactor Netty's
     * request handling, so that client requests are admitted or refused (503) before Reactor Netty or WebFlux
     * builds anything for them, and timed in {@code dht.client.requests} from reading their head to writing their
     * answer's head.
     */
    @Bean
    NettyServerCustomizer admissionHandlerInstaller(AdmissionControl control, BodyMemory memory,
                                                    ClientRequestMetrics metrics) {
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) -> {
            if (channel.pipeline().get(NettyPipeline.HttpTrafficHandler) == null) {
                throw new IllegalStateException("no " + NettyPipeline.HttpTrafficHandler + " in " + channel.pipeline().names()
                        + ": the admission handler supports HTTP/1.1 only");
            }
            channel.pipeline().addBefore(NettyPipeline.HttpTrafficHandler, ADMISSION_HANDLER, new AdmissionHandler(control, memory, metrics));
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
}
