package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.ShardRouter;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import dev.dht.testing.SettableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * TTL as last-write-wins sees it, with no sockets and a wall clock the test sets: an expired value reads as
 * absent, and it hides an older value on another replica like a tombstone of its write's timestamp (GET,
 * read repair, range merge).
 */
class CoordinatorTtlTest {
    private static final ReplicationFactor ALL = new ReplicationFactor(3, 3);
    private static final Duration TTL = Duration.ofSeconds(60);

    private final ClusterTopology topology = new ClusterTopology(URI.create("http://a:8080"),
            List.of(URI.create("http://a:8080"), URI.create("http://b:8080"), URI.create("http://c:8080")));
    private final SettableClock wall = new SettableClock(1_700_000_000_000L);
    private final HybridLogicalClock clock = new HybridLogicalClock(wall);
    private final InMemoryReplica self = new InMemoryReplica(Replica.IN_PROCESS);
    private final InMemoryReplica b = new InMemoryReplica(Replica.PEER_UP);
    private final InMemoryReplica c = new InMemoryReplica(Replica.PEER_UP);
    private final Coordinator coordinator = new Coordinator(topology.membership(),
            FixedReplicas.of(Map.of(node(0), self, node(1), b, node(2), c)), clock, Duration.ofSeconds(5), Duration.ZERO,
            new SimpleMeterRegistry());

    @Test
    void aValueReadsUntilItsTtlAndAbsentFromThen() {
        coordinator.write(WriteRequest.put("k", bytes("short-lived"), ALL, TTL)).block();
        wall.advance(TTL.minusMillis(1));
        assertThat(coordinator.get("k", ALL).block()).map(record -> text(record.value())).contains("short-lived");

        wall.advance(Duration.ofMillis(1));

        assertThat(coordinator.get("k", ALL).block()).as("expired: 404").isEmpty();
    }

    @Test
    void theExpiryIsAbsoluteAndTravelsWithTheRecord() {
        coordinator.write(WriteRequest.put("k", bytes("v"), ALL, TTL)).block();

        for (InMemoryReplica replica : List.of(self, b, c)) {
            assertThat(replica.read("k").block()).map(Record::expiresAtMillis).contains(wall.millis() + TTL.toMillis());
        }
    }

    @Test
    void anExpiredValueHidesAnOlderValueAndIsReadRepairedOverIt() {
        long older = clock.now();
        c.write("k", Record.value(older, bytes("older, never deleted"))).block();
        coordinator.write(WriteRequest.put("k", bytes("short-lived"), new ReplicationFactor(2, 2), TTL)).block();
        wall.advance(TTL.plusSeconds(1));

        Optional<Record> read = coordinator.get("k", ALL).block();

        assertThat(read).as("the expired value wins by its timestamp and reads as absent").isEmpty();
        assertThat(c.read("k").block()).as("read repair sent the expired value over the older one")
                .map(record -> text(record.value())).contains("short-lived");
        assertThat(coordinator.get("k", ALL).block()).isEmpty();
    }

    @Test
    void aWriteAfterTheExpiryWins() {
        coordinator.write(WriteRequest.put("k", bytes("short-lived"), ALL, TTL)).block();
        wall.advance(TTL.plusSeconds(1));

        coordinator.write(WriteRequest.put("k", bytes("new"), ALL)).block();

        assertThat(coordinator.get("k", ALL).block()).map(record -> text(record.value())).contains("new");
    }

    @Test
    void aRangeSkipsAnExpiredValueAndTheOlderVersionsItHides() {
        long older = clock.now();
        long newer = clock.now();
        RangeCoordinator ranges = new RangeCoordinator(List.of(
                listing(new KeyedRecord(bytes("a"), Record.value(older, bytes("older")))),
                listing(new KeyedRecord(bytes("a"), Record.value(newer, bytes("expired"), 0, wall.millis() - 1)),
                        new KeyedRecord(bytes("b"), Record.value(newer, bytes("live"), 0, wall.millis() + 1)))),
                clock);

        List<String> keys = ranges.range("a", null).map(entry -> text(entry.key())).collectList().block();

        assertThat(keys).containsExactly("b");
    }

    private static Replica listing(KeyedRecord... records) {
        return new Replica() {
            @Override
            public Mono<Optional<Record>> read(String id) {
                return Mono.error(new UnsupportedOperationException("not used"));
            }

            @Override
            public Mono<Boolean> write(String id, Record record) {
                return Mono.error(new UnsupportedOperationException("not used"));
            }

            @Override
            public Flux<KeyedRecord> range(String start, String end) {
                return Flux.just(records);
            }

            @Override
            public int readRank() {
                return Replica.PEER_UP;
            }
        };
    }

    private Node node(int index) {
        return topology.nodes().get(index);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
