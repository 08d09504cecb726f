package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.web.reactive.function.server.RequestPredicates.GET;
import static org.springframework.web.reactive.function.server.RequestPredicates.POST;
import static org.springframework.web.reactive.function.server.RequestPredicates.PUT;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.EpochFence;
import dev.dht.cluster.Placement;
import dev.dht.http.RequestBodyReader;
import dev.dht.node.HybridLogicalClock;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LevelDbRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.storage.StorageEngine;
import dev.dht.storage.StorageScheduler;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.RouterFunctions;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The replica's side of epoch fencing over HTTP: node b took a join of x to the read switch (epoch 4), its rollback
 * and the settled view without x (epoch 6). A record call placed under epoch 4 for a key the join moved gets 503
 * {@code stale-epoch} with b's epoch in {@link InternalProtocol#EPOCH_HEADER}, and nothing is read or written (a
 * batch with one such key is refused whole); a key the join left as it was is served under epoch 4 too.
 */
class RecordFenceTest {
    private static final List<URI> NODES = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"));
    private static final URI X = URI.create("http://x:8080");

    @TempDir
    Path dir;
    private LocalStore store;
    private WebTestClient client;
    private DisposableServer server;
    private final List<ClusterView> views = new ArrayList<>();

    @BeforeEach
    void start() {
        views.add(ClusterView.initial(NODES, 3));
        views.add(views.get(0).withJoining(X));
        views.add(views.get(1).advanced());
        views.add(views.get(2).advanced());
        views.add(views.get(3).aborted());
        views.add(views.get(4).advanced());
        EpochFence fence = new EpochFence(new Placement(views.get(0), NODES.get(1)));
        for (int i = 1; i < 6; i++) {
            fence.adopted(new Placement(views.get(i), NODES.get(1)));
        }
        store = new LocalStore(LevelDbRecordRepository.open(dir, StorageEngine.JAVA, false),
                new StorageScheduler(1, 64, "fence-test-storage"), new HybridLogicalClock());
        InternalRecordHandler records = new InternalRecordHandler(store, RebuildGate.open(), fence,
                new RequestBodyReader(1 << 16));
        // a real server: the record handlers read bodies from Reactor Netty's request
        server = HttpServer.create().host("127.0.0.1").port(0)
                .handle(new ReactorHttpHandlerAdapter(RouterFunctions.toHttpHandler(
                        route(GET(InternalProtocol.RECORD_PATH), records::read)
                                .andRoute(PUT(InternalProtocol.RECORD_PATH), records::write)
                                .andRoute(POST(InternalProtocol.READS_PATH), records::readBatch)
                                .andRoute(POST(InternalProtocol.RECORDS_PATH), records::writeBatch))))
                .bindNow();
        client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + server.port())
                .responseTimeout(Duration.ofSeconds(30)).build(); // the first request loads Netty's and Spring's classes
    }

    @AfterEach
    void close() throws Exception {
        server.disposeNow();
        store.close();
    }

    /** A key whose two replicas x's join moved ({@code moved}), or left as they were. */
    private String key(boolean moved) {
        Placement joining = new Placement(views.get(1));
        return IntStream.range(0, 10_000).mapToObj(i -> "k" + i).filter(id -> {
            byte[] key = id.getBytes(StandardCharsets.UTF_8);
            return moved != joining.oldReplicas(key, 2).equals(joining.newReplicas(key, 2));
        }).findFirst().orElseThrow();
    }

    private static byte[] record(long timestamp) {
        return Record.value(timestamp, new byte[] {1}, 2, 0).encode();
    }

    @Test
    void aCallFromBeforeTheRollbackIsRefusedForAKeyTheJoinMovedAndChangesNothing() {
        String moved = key(true);

        client.put().uri(InternalProtocol.RECORD_PATH + "?id=" + moved).header(InternalProtocol.EPOCH_HEADER, "4")
                .bodyValue(record(5)).exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.OVERLOAD_REASON_HEADER, "stale-epoch")
                .expectHeader().valueEquals(InternalProtocol.EPOCH_HEADER, "6");
        assertThat(store.read(moved.getBytes(StandardCharsets.UTF_8)).block()).as("nothing written").isEmpty();

        client.get().uri(InternalProtocol.RECORD_PATH + "?id=" + moved + "&from=2")
                .header(InternalProtocol.EPOCH_HEADER, "4").exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.OVERLOAD_REASON_HEADER, "stale-epoch");
        client.put().uri(InternalProtocol.RECORD_PATH + "?id=" + moved).header(InternalProtocol.EPOCH_HEADER, "6")
                .bodyValue(record(5)).exchange()
                .expectStatus().isEqualTo(201);
    }

    @Test
    void aKeyTheJoinLeftAsItWasIsServedUnderTheOlderEpoch() {
        String untouched = key(false);

        client.put().uri(InternalProtocol.RECORD_PATH + "?id=" + untouched).header(InternalProtocol.EPOCH_HEADER, "4")
                .bodyValue(record(5)).exchange()
                .expectStatus().isEqualTo(201);
        client.get().uri(InternalProtocol.RECORD_PATH + "?id=" + untouched + "&from=2")
                .header(InternalProtocol.EPOCH_HEADER, "4").exchange()
                .expectStatus().isOk();
    }

    @Test
    void aBatchWithOneStaleKeyIsRefusedWhole() {
        String moved = key(true);
        String untouched = key(false);
        List<KeyedRecord> batch = List.of(
                new KeyedRecord(untouched.getBytes(StandardCharsets.UTF_8), Record.decode(record(5))),
                new KeyedRecord(moved.getBytes(StandardCharsets.UTF_8), Record.decode(record(5))));

        client.post().uri(InternalProtocol.RECORDS_PATH).header(InternalProtocol.EPOCH_HEADER, "4")
                .bodyValue(RangeFrameCodec.encodeBatch(batch)).exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(InternalProtocol.OVERLOAD_REASON_HEADER, "stale-epoch");
        assertThat(store.read(untouched.getBytes(StandardCharsets.UTF_8)).block()).as("no record of the batch")
                .isEmpty();

        client.post().uri(InternalProtocol.READS_PATH + "?from=2").header(InternalProtocol.EPOCH_HEADER, "4")
                .bodyValue(ReadBatchCodec.encodeKeys(List.of(untouched.getBytes(StandardCharsets.UTF_8),
                        moved.getBytes(StandardCharsets.UTF_8)))).exchange()
                .expectStatus().isEqualTo(503);
        client.post().uri(InternalProtocol.RECORDS_PATH).header(InternalProtocol.EPOCH_HEADER, "6")
                .bodyValue(RangeFrameCodec.encodeBatch(batch)).exchange()
                .expectStatus().isEqualTo(201);
    }
}
