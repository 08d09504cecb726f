package dev.dht.api;

import dev.dht.admission.BodyHold;
import dev.dht.admission.BodyMemory;
import dev.dht.cluster.Membership;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.http.RequestBodyReader;
import dev.dht.replication.Coordinator;
import dev.dht.replication.ReplicationFactor;
import dev.dht.replication.WriteRequest;
import dev.dht.storage.Record;
import java.time.Duration;
import java.util.Optional;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * {@code /v0/entity?id=ID[&replicas=ack/from]}: GET 200/404, PUT 201 (optionally {@code &ttl=SECONDS}), DELETE 202,
 * other methods 405. Validates the request (400 for an id that is missing, empty, not UTF-8 or holds a control
 * character: see {@link RequestParameters#optionalKey}; 400 for a {@code ttl} out of range or on GET/DELETE), then
 * hands it to the {@link Coordinator}. Runs on the event loop; never blocks.
 */
public final class EntityHandler {
    private final Coordinator coordinator;
    private final Membership membership;
    private final RequestBodyReader bodyReader;
    private final BodyMemory bodyMemory;

    /**
     * @param bodyMemory        the node's request-body bytes in flight, where a value stays counted while replica
     *                          writes hold it after its request ended ({@link BodyHold})
     */
    public EntityHandler(Coordinator coordinator, Membership membership, RequestBodyReader bodyReader,
                         BodyMemory bodyMemory) {
        this.coordinator = coordinator;
        this.membership = membership;
        this.bodyReader = bodyReader;
        this.bodyMemory = bodyMemory;
    }

    /**
     * The request's {@code replicas}, or the default: a majority of the view's replication factor, or of the members while
     * there are fewer; {@code from} at most the members that keep replicas through a change in progress
     * ({@link dev.dht.cluster.Placement#size()}), else 400. 503 if this node is no member (it has yet to join, or has
     * left), or checks its view after a start or a pause.
     */
    private ReplicationFactor replicationFactor(ServerRequest request) {
        if (!membership.isMember()) {
            throw new OverloadedException(OverloadReason.NOT_A_MEMBER, "this node is no member of the cluster "
                    + (membership.epoch() == 0 ? "yet: it is joining" : "any more: it has left"));
        }
        if (!membership.isViewConfirmed()) {
            throw new OverloadedException(OverloadReason.VIEW_CHECK, "this node checks its cluster view with the "
                    + "other members after a start or a pause before it serves");
        }
        int size = membership.placement().size();
        return RequestParameters.replicationFactor(request, ReplicationFactor.defaultFor(membership.view().replicationFactor(), size), size);
    }

    /**
     * 200 with the newest value among {@code ack} replicas; 404 if absent, deleted or expired; 504 if too few
     * answer; 400 with a {@code ttl}.
     */
    public Mono<ServerResponse> get(ServerRequest request) {
        String id = RequestParameters.requiredKey(request, "id");
        RequestParameters.noTtl(request);
        ReplicationFactor rf = replicationFactor(request);
        return coordinator.get(id, rf).flatMap(EntityHandler::toResponse);
    }

    /**
     * 201 once {@code ack} replicas stored the body; 413 if it exceeds {@code dht.max-value-size}; 503 if admission
     * control cut a chunked body short for want of memory (nothing stored). With {@code ttl=SECONDS} (1 s to 10
     * years, else 400) the value reads as absent from that long after now. A value replica writes still hold when
     * the request ends stays counted in the node's body memory until they are done ({@link BodyHold}).
     */
    public Mono<ServerResponse> put(ServerRequest request) {
        String id = RequestParameters.requiredKey(request, "id");
        ReplicationFactor rf = replicationFactor(request);
        Optional<Duration> ttl = RequestParameters.ttl(request);
        return bodyReader.read(request)
                .flatMap(value -> {
                    BodyHold hold = new BodyHold(bodyMemory, value.length);
                    return coordinator.write(new WriteRequest(id, value, rf, ttl.orElse(null)), hold::settled)
                            .doFinally(signal -> hold.requestEnded());
                })
                .then(ServerResponse.status(HttpStatus.CREATED).build());
    }

    /**
     * 202 once {@code ack} replicas stored a tombstone (also when the key never existed); 400 with a {@code ttl}.
     * A body is read and dropped first, so that a DELETE whose body is malformed (400) deletes nothing.
     */
    public Mono<ServerResponse> delete(ServerRequest request) {
        String id = RequestParameters.requiredKey(request, "id");
        RequestParameters.noTtl(request);
        ReplicationFactor rf = replicationFactor(request);
        return bodyReader.discard(request)
                .then(Mono.defer(() -> coordinator.write(WriteRequest.delete(id, rf))))
                .then(ServerResponse.status(HttpStatus.ACCEPTED).build());
    }

    /** 405 with an Allow header, for any other method on /v0/entity. */
    public Mono<ServerResponse> methodNotAllowed(ServerRequest request) {
        return ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                .allow(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue("method " + request.method() + " not allowed on /v0/entity\n");
    }

    private static Mono<ServerResponse> toResponse(Optional<Record> newest) {
        if (newest.isEmpty() || newest.get().isTombstone()) {
            return ServerResponse.notFound().build();
        }
        return ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(newest.get().value());
    }
}
