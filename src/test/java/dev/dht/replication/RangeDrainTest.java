package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Placement;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import dev.dht.testing.SettableClock;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A range and a membership step: the step (a member acknowledging a newer view, {@link Membership#drained}) waits
 * for a range placed under the older view, and a range that runs on past the drain limit is cut with
 * {@link RangeUnavailableException} (the client sees the body end without its last chunk) so the step goes on; a
 * range started after the step reads the new view's members. The replicas' streams are driven by the test.
 */
class RangeDrainTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("http://c:8080");
    private static final URI JOINER = URI.create("http://d:8080");

    private final HybridLogicalClock clock = new HybridLogicalClock(new SettableClock(1_700_000_000_000L));
    private final Membership membership = new Membership(A, ClusterView.initial(List.of(A, B, C), 3), null);
    /** Each node's stream of its part of the next range it is asked, emitted by the test. */
    private final Map<URI, Sinks.Many<KeyedRecord>> parts = new ConcurrentHashMap<>();
    /** The nodes each range asked, in the order ranges were started. */
    private final List<List<URI>> asked = new CopyOnWriteArrayList<>();
    private final RangeCoordinator ranges = new RangeCoordinator(membership, this::replicasOf, clock);

    @Test
    void aStepWaitsForARangeOfTheOlderViewThatEndsInTime() {
        Received range = start();
        membership.adopt(membership.view().withJoining(JOINER));
        CompletableFuture<Void> step = membership.drained(2, Duration.ofSeconds(30)).toFuture();

        emit(A, "k1");
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> !step.isDone());
        parts.values().forEach(Sinks.Many::tryEmitComplete);

        await().atMost(Duration.ofSeconds(5)).until(step::isDone);
        assertThat(range.error.get()).isNull();
        assertThat(range.completed).isCompleted();
        assertThat(range.keys).containsExactly("k1");
        assertThat(asked.get(0)).containsExactly(A, B, C);
    }

    @Test
    void aRangeThatOutlivesItsViewIsCutAndTheStepGoesOn() {
        Received range = start();
        for (URI node : List.of(A, B, C)) { // k1 is merged and sent once every node has shown a key after it
            emit(node, "k1");
            emit(node, "k2");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> range.keys.contains("k1"));
        membership.adopt(membership.view().withJoining(JOINER));
        CompletableFuture<Void> step = membership.drained(2, Duration.ofMillis(200)).toFuture();

        await().atMost(Duration.ofSeconds(5)).until(step::isDone);
        await().atMost(Duration.ofSeconds(5)).until(() -> range.error.get() != null);
        assertThat(range.error.get()).isInstanceOf(RangeUnavailableException.class)
                .hasMessageContaining("cluster view changed");
        assertThat(range.keys).containsExactly("k1");
        assertThat(range.completed).isNotDone();

        // a range started under the new view reads its members, the joiner included, and is not cut
        parts.clear();
        Received next = start();
        parts.values().forEach(Sinks.Many::tryEmitComplete);
        await().atMost(Duration.ofSeconds(5)).until(next.completed::isDone);
        assertThat(next.error.get()).isNull();
        assertThat(asked.get(1)).containsExactlyInAnyOrder(A, B, C, JOINER);
    }

    private Received start() {
        Received received = new Received();
        ranges.range("k", null).subscribe(
                record -> received.keys.add(new String(record.key(), StandardCharsets.UTF_8)),
                received.error::set,
                () -> received.completed.complete(null));
        return received;
    }

    private void emit(URI node, String key) {
        parts.get(node).tryEmitNext(new KeyedRecord(key.getBytes(StandardCharsets.UTF_8),
                Record.value(clock.now(), key.getBytes(StandardCharsets.UTF_8))));
    }

    private List<Replica> replicasOf(Placement placement) {
        List<URI> nodes = placement.members().stream().map(node -> node.url()).toList();
        asked.add(nodes);
        return nodes.stream().map(node -> (Replica) new StreamedReplica(parts.computeIfAbsent(node,
                unused -> Sinks.many().unicast().onBackpressureBuffer()))).toList();
    }

    /** What a range delivered: keys in order, and how it ended. */
    private static final class Received {
        final List<String> keys = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final CompletableFuture<Void> completed = new CompletableFuture<>();
    }

    /** A replica whose range is whatever the test emits on its sink. */
    private record StreamedReplica(Sinks.Many<KeyedRecord> part) implements Replica {
        @Override
        public Mono<Optional<Record>> read(String id) {
            return Mono.just(Optional.empty());
        }

        @Override
        public Mono<Boolean> write(String id, Record record) {
            return Mono.just(true);
        }

        @Override
        public Flux<KeyedRecord> range(String start, String end) {
            return part.asFlux();
        }

        @Override
        public int readRank() {
            return PEER_UP;
        }
    }
}
