package dev.dht.api;

import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * {@code GET /v0/status}: 200 while Actuator's aggregate health is UP (the LevelDB store is open, disk space
 * ok), otherwise 503. Actuator's health call is synchronous, so it runs on the bounded-elastic scheduler.
 */
public final class StatusHandler {
    private final HealthEndpoint health;

    public StatusHandler(HealthEndpoint health) {
        this.health = health;
    }

    /** 200 "UP" or 503 with the aggregate status. */
    public Mono<ServerResponse> status(ServerRequest request) {
        return Mono.fromCallable(() -> health.health().getStatus())
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(status -> ServerResponse
                        .status(Status.UP.equals(status) ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE)
                        .contentType(MediaType.TEXT_PLAIN)
                        .bodyValue(status.getCode() + "\n"));
    }
}
