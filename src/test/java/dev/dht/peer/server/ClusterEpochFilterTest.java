package dev.dht.peer.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.web.reactive.function.server.RequestPredicates.POST;
import static org.springframework.web.reactive.function.server.RequestPredicates.PUT;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import dev.dht.peer.InternalProtocol;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * What a replica answers an internal request by the sender's epoch and membership: a node that is no member of the
 * replica's view gets 503 {@code not-a-member} for record traffic whether it is behind or has just taken the same
 * view (it admitted its client's request before) or is ahead of it (judged once the replica took its view), and is
 * served otherwise.
 */
class ClusterEpochFilterTest {
    private static final long EPOCH = 7;
    private static final String MEMBER = "http://member:8080";
    private static final String REMOVED = "http://removed:8080";

    private final AtomicInteger served = new AtomicInteger();
    private final WebTestClient client = WebTestClient.bindToRouterFunction(
            route(PUT(InternalProtocol.RECORD_PATH), request -> served(201))
                    .andRoute(POST(InternalProtocol.RECORDS_PATH), request -> served(201))
                    .andRoute(POST(InternalProtocol.CLEANUP_PATH), request -> served(202))
                    .filter(new ClusterEpochFilter(() -> EPOCH, (uri, epoch) -> Mono.empty(),
                            uri -> Set.of(URI.create(MEMBER)).contains(uri))))
            .build();

    private Mono<ServerResponse> served(int status) {
        served.incrementAndGet();
        return ServerResponse.status(status).build();
    }

    @Test
    void aNonMemberAtTheSameEpochWritesNothing() {
        send(putRecord(), REMOVED, EPOCH).expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.OVERLOAD_REASON_HEADER, "not-a-member");
        send(postRecords(), REMOVED, EPOCH).expectStatus().isEqualTo(503);
        assertThat(served).as("no write reached the store").hasValue(0);
    }

    @Test
    void aNonMemberBehindWritesNothing() {
        send(putRecord(), REMOVED, EPOCH - 1).expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.EPOCH_HEADER, Long.toString(EPOCH));
        assertThat(served).hasValue(0);
    }

    @Test
    void aNonMemberAheadWritesNothingOnceThisNodeTookItsView() {
        send(putRecord(), REMOVED, EPOCH + 1).expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.OVERLOAD_REASON_HEADER, "not-a-member");
        send(postRecords(), REMOVED, EPOCH + 1).expectStatus().isEqualTo(503);
        assertThat(served).hasValue(0);
        send(putRecord(), MEMBER, EPOCH + 1).expectStatus().isEqualTo(201);
    }

    @Test
    void aMemberIsServed() {
        send(putRecord(), MEMBER, EPOCH).expectStatus().isEqualTo(201)
                .expectHeader().valueEquals(InternalProtocol.EPOCH_HEADER, Long.toString(EPOCH));
        send(putRecord(), MEMBER, EPOCH - 1).expectStatus().isEqualTo(201);
        assertThat(served).hasValue(2);
    }

    @Test
    void aLeftNodeDrivingItsDecommissionStillStartsTheCleanup() {
        send(postCleanup(), REMOVED, EPOCH).expectStatus().isEqualTo(202);
        assertThat(served).hasValue(1);
    }

    /** A request as {@code sender} sends it at {@code epoch}. */
    private WebTestClient.ResponseSpec send(WebTestClient.RequestBodySpec request, String sender, long epoch) {
        return request.header(InternalProtocol.SENDER_HEADER, sender)
                .header(InternalProtocol.EPOCH_HEADER, Long.toString(epoch))
                .exchange();
    }

    private WebTestClient.RequestBodySpec putRecord() {
        return client.put().uri(InternalProtocol.RECORD_PATH + "?id=a");
    }

    private WebTestClient.RequestBodySpec postRecords() {
        return client.post().uri(InternalProtocol.RECORDS_PATH);
    }

    private WebTestClient.RequestBodySpec postCleanup() {
        return client.post().uri(InternalProtocol.CLEANUP_PATH + "?epoch=" + EPOCH);
    }
}
