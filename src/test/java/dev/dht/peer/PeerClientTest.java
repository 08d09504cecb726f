package dev.dht.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.Node;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * The failure mapping of {@link PeerClient}, against a real peer (a Reactor Netty server on a random port): a
 * connection pool that refuses to queue another call, a peer's 503 with and without a reason, another error
 * status; and what goes on the wire (method, URI, secret).
 */
class PeerClientTest {
    private final LinkedBlockingQueue<String> requests = new LinkedBlockingQueue<>();
    private volatile BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> answer;
    private DisposableServer server;
    private ConnectionProvider pool;
    private Node peer;

    @BeforeEach
    void startPeer() {
        server = HttpServer.create().host("127.0.0.1").port(0)
                .handle((request, response) -> {
                    requests.add(request.method() + " " + request.uri() + " "
                            + request.requestHeaders().get(InternalProtocol.SECRET_HEADER));
                    return answer.apply(request, response);
                })
                .bindNow();
        peer = new Node(URI.create("http://127.0.0.1:" + server.port()), false);
    }

    @AfterEach
    void stopPeer() {
        server.disposeNow();
        if (pool != null) {
            pool.disposeLater().block(Duration.ofSeconds(10));
        }
    }

    @Test
    void aPoolThatRefusesToQueueAnotherCallIsARefusalWithConnectionPoolFull() throws Exception {
        Sinks.Empty<Void> release = Sinks.empty();
        answer = (request, response) -> release.asMono().then(response.status(404).send());
        pool = ConnectionProvider.builder("one-connection").maxConnections(1).pendingAcquireMaxCount(1).build();
        PeerClient client = client(WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(pool))).build());

        CompletableFuture<Optional<Record>> first = client.read(peer, "a").toFuture();
        assertThat(requests.poll(10, TimeUnit.SECONDS)).as("the first call holds the only connection").isNotNull();
        CompletableFuture<Optional<Record>> second = client.read(peer, "b").toFuture();
        CompletableFuture<Optional<Record>> third = client.read(peer, "c").toFuture();

        // One of the two waits for the connection; the other finds the line full and is refused at once.
        CompletableFuture.anyOf(second, third).handle((value, error) -> null).get(10, TimeUnit.SECONDS);
        CompletableFuture<Optional<Record>> refused = second.isCompletedExceptionally() ? second : third;
        assertThatThrownBy(refused::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(OverloadedException.class, refusal -> {
                    assertThat(refusal.reason()).isEqualTo(OverloadReason.CONNECTION_POOL_FULL);
                    assertThat(refusal).hasMessage("no free connection to " + peer + " and too many calls waiting");
                    assertThat(causeNames(refusal)).contains("PoolAcquirePendingLimitException");
                });

        release.tryEmitEmpty();
        CompletableFuture<Optional<Record>> waited = refused == second ? third : second;
        assertThat(first.get(10, TimeUnit.SECONDS)).as("a 404 answer").isEmpty();
        assertThat(waited.get(10, TimeUnit.SECONDS)).as("the call that waited got the connection").isEmpty();
    }

    @Test
    void aPeerOutOfDiskRefusesWithDiskFullAndSaysSo() {
        answer = (request, response) -> response.status(503)
                .header(InternalProtocol.OVERLOAD_REASON_HEADER, OverloadReason.DISK_FULL.token()).send();

        assertThatThrownBy(() -> client().write(peer, entry("k")).block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(OverloadedException.class,
                        refusal -> assertThat(refusal.reason()).isEqualTo(OverloadReason.DISK_FULL))
                .hasMessage("storage full on " + peer + ": writes resume when space is freed there");
    }

    @Test
    void aPeersRefusalCarriesTheReasonItNamedOnEveryEndpoint() {
        answer = (request, response) -> response.status(503)
                .header(InternalProtocol.OVERLOAD_REASON_HEADER, OverloadReason.REBUILDING.token()).send();
        PeerClient client = client();

        for (Mono<?> call : List.of(client.read(peer, "k"), client.readBatch(peer, List.of(key("a"), key("b"))),
                client.writeBatch(peer, List.of(entry("a"), entry("b"))), client.range(peer, "a", null).then(),
                client.repairTree(peer, peer), client.repairRecords(peer, peer, new BitSet()).then())) {
            assertThatThrownBy(() -> call.block(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(OverloadedException.class,
                            refusal -> assertThat(refusal.reason()).isEqualTo(OverloadReason.REBUILDING))
                    .hasMessage(peer + " refused: rebuilding (503)");
        }
    }

    @Test
    void aStaleEpochRefusalCarriesThePeersEpochAndTheCallItsPlacement() throws Exception {
        LinkedBlockingQueue<String> epochs = new LinkedBlockingQueue<>();
        answer = (request, response) -> {
            epochs.add(request.requestHeaders().get(InternalProtocol.EPOCH_HEADER));
            return response.status(503).header(InternalProtocol.EPOCH_HEADER, "6")
                    .header(InternalProtocol.OVERLOAD_REASON_HEADER, OverloadReason.STALE_EPOCH.token()).send();
        };
        PeerClient client = client();

        for (Mono<?> call : List.of(client.read(peer, "k", 2, 4), client.write(peer, entry("k"), 4),
                client.readBatch(peer, List.of(key("a"), key("b")), 2, 4))) {
            assertThatThrownBy(() -> call.block(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(OverloadedException.class, refusal -> {
                        assertThat(refusal.reason()).isEqualTo(OverloadReason.STALE_EPOCH);
                        assertThat(refusal.heldEpoch()).as("the peer's epoch").isEqualTo(6);
                    });
            assertThat(epochs.take()).as("the epoch the call was placed under").isEqualTo("4");
        }
        assertThat(List.of(requests.take(), requests.take(), requests.take())).containsExactly(
                "GET /internal/record?id=k&from=2 secret", "PUT /internal/record?id=k secret",
                "POST /internal/records/read?from=2 secret");
    }

    @Test
    void anAnswerOfANodeOfAnotherClusterIsNoAnswerWhateverItsStatus() {
        UUID ours = UUID.fromString("00000000-0000-0000-0000-00000000000a");
        UUID theirs = UUID.fromString("00000000-0000-0000-0000-00000000000b");
        LinkedBlockingQueue<Long> newerEpochs = new LinkedBlockingQueue<>();
        PeerClient client = client(WebClient.create(), new EpochTracker() {
            @Override
            public long epoch() {
                return 3;
            }

            @Override
            public URI self() {
                return URI.create("http://127.0.0.1:8080");
            }

            @Override
            public UUID cluster() {
                return ours;
            }

            @Override
            public void newerEpochSeen(Node from, long epoch) {
                newerEpochs.add(epoch);
            }
        });
        answer = (request, response) -> response.status(request.method().name().equals("GET") ? 200 : 204)
                .header(InternalProtocol.CLUSTER_ID_HEADER, theirs.toString())
                .header(InternalProtocol.EPOCH_HEADER, "9")
                .sendByteArray(Mono.just(Record.value(1, "v".getBytes(StandardCharsets.UTF_8), 1, 0).encode()));

        for (Mono<?> call : List.of(client.write(peer, entry("k")), client.read(peer, "k"),
                client.writeBatch(peer, List.of(entry("a"), entry("b"))), client.range(peer, "a", null).then())) {
            assertThatThrownBy(() -> call.block(Duration.ofSeconds(10)))
                    .isInstanceOf(ClusterMismatchException.class)
                    .hasMessage(peer + " answered as a node of cluster " + theirs + ", this node is of cluster " + ours);
        }
        assertThat(newerEpochs).as("no view is fetched from a node of another cluster").isEmpty();

        answer = (request, response) -> response.status(204)
                .header(InternalProtocol.CLUSTER_ID_HEADER, ours.toString()).send();
        client.write(peer, entry("k")).block(Duration.ofSeconds(10));
        answer = (request, response) -> response.status(204).send();
        client.write(peer, entry("k")).block(Duration.ofSeconds(10));
    }

    @Test
    void aRefusalWithoutAReasonIsAnOverloadedPeer() {
        answer = (request, response) -> response.status(503).send();

        assertThatThrownBy(() -> client().read(peer, "k").block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(OverloadedException.class,
                        refusal -> assertThat(refusal.reason()).isEqualTo(OverloadReason.PEER_OVERLOADED))
                .hasMessage(peer + " refused: peer-overloaded (503)");
    }

    @Test
    void anotherErrorStatusIsAnErrorStatusNotARefusal() {
        answer = (request, response) -> response.status(500).send();

        assertThatThrownBy(() -> client().write(peer, entry("k")).block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(WebClientResponseException.class,
                        error -> assertThat(error.getStatusCode().value()).isEqualTo(500));
    }

    @Test
    void everyCallCarriesTheSecretAndItsParametersPercentEncoded() throws Exception {
        answer = (request, response) -> response.status(404).send();
        PeerClient client = client();
        Node self = new Node(URI.create("http://127.0.0.1:8080"), true);

        client.read(peer, "a b/ü?&=+%").block(Duration.ofSeconds(10));
        client.range(peer, "a b", "z/").onErrorResume(error -> Mono.empty()).blockLast(Duration.ofSeconds(10));
        client.repairTree(peer, self).onErrorResume(error -> Mono.empty()).block(Duration.ofSeconds(10));

        assertThat(List.of(requests.take(), requests.take(), requests.take())).containsExactly(
                "GET /internal/record?id=a%20b%2F%C3%BC%3F%26%3D%2B%25 secret",
                "GET /internal/range?start=a%20b&end=z%2F secret",
                "GET /internal/repair/tree?peer=http%3A%2F%2F127.0.0.1%3A8080 secret");
    }

    private PeerClient client() {
        return client(WebClient.create());
    }

    private static PeerClient client(WebClient web) {
        return client(web, NoEpochTracker.INSTANCE);
    }

    private static PeerClient client(WebClient web, EpochTracker epochs) {
        return new PeerClient(web, "secret", new ReplicaCallMetrics(new SimpleMeterRegistry()),
                Duration.ofSeconds(30), Duration.ofSeconds(30), epochs);
    }

    private static List<String> causeNames(Throwable error) {
        List<String> names = new ArrayList<>();
        for (Throwable t = error.getCause(); t != null; t = t.getCause()) {
            names.add(t.getClass().getSimpleName());
        }
        return names;
    }

    private static byte[] key(String id) {
        return id.getBytes(StandardCharsets.UTF_8);
    }

    private static KeyedRecord entry(String id) {
        return new KeyedRecord(key(id), Record.value(1, key("v")));
    }
}
