package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.EpochFence;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A coordinator cut off during a rollback past the read switch: node a took the views of a join of x up to the read
 * switch (epoch 4); b, c and x took the rollback (5) and the settled view without x (6), and x cleaned up. a's client
 * requests are placed under epoch 4, so a key x's join moved is read from and written to the new sets, x among them.
 * The replicas that took the rollback refuse such calls ({@link EpochFence}); a takes their view (here the refusal
 * hands it over, as the peer client's catch-up does) and places the request again under it, again if a replica
 * refuses it under the next step (up to {@link Coordinator#STALE_ATTEMPTS} attempts). Without the retry a
 * read at 2/3 would answer from a's own store and the cleaned-up x, returning the value that a 2/3 write after the
 * rollback replaced, and a write would leave a copy on x, a node that is no replica. A coordinator that cannot fetch
 * the newer view answers the refusal (503 {@code stale-epoch} with {@code Retry-After}, not 504). No sockets: in-memory replicas.
 */
class StaleEpochRetryTest {
    private static final List<URI> NODES = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"));
    private static final URI X = URI.create("http://x:8080");
    private static final ReplicationFactor TWO_OF_THREE = new ReplicationFactor(2, 3);

    private final List<ClusterView> views = views();
    private final Membership membership = new Membership(NODES.get(0), views.get(0), null);
    private final Map<URI, InMemoryReplica> stores = new HashMap<>();
    private final Coordinator coordinator;
    /** Whether a refusal hands the refusing replica's view to a (the peer client's catch-up). */
    private volatile boolean catchUp = true;
    /**
     * Whether a refusal names and hands only the view one step after a's (the replica was one step ahead, and took
     * the next step while a caught up, as the steps of a change follow each other within milliseconds).
     */
    private volatile boolean oneStepAhead;

    StaleEpochRetryTest() {
        for (int i = 1; i < 4; i++) {
            membership.adopt(views.get(i));
        }
        Map<Node, Replica> byNode = new HashMap<>();
        for (URI node : List.of(NODES.get(0), NODES.get(1), NODES.get(2), X)) {
            boolean self = node.equals(NODES.get(0));
            // a first (in-process), then x, then b and c: a read at 2/3 asks a and x first
            InMemoryReplica store = new InMemoryReplica(self ? Replica.IN_PROCESS
                    : node.equals(X) ? Replica.PEER_UP : Replica.PEER_SLOW);
            stores.put(node, store);
            byNode.put(new Node(node, self), self ? store : new FencedReplica(store, fenceAt6(node)));
        }
        coordinator = new Coordinator(membership, FixedReplicas.of(byNode), new HybridLogicalClock(),
                Duration.ofSeconds(2), Duration.ofSeconds(1), new SimpleMeterRegistry());
    }

    /** Epochs 1 to 6: settled, x joining, streaming, read switch, rollback, settled without x. */
    private static List<ClusterView> views() {
        List<ClusterView> views = new ArrayList<>();
        views.add(ClusterView.initial(NODES, 3));
        views.add(views.get(0).withJoining(X));
        views.add(views.get(1).advanced());
        views.add(views.get(2).advanced());
        views.add(views.get(3).aborted());
        views.add(views.get(4).advanced());
        return views;
    }

    private EpochFence fenceAt6(URI node) {
        EpochFence fence = new EpochFence(new Placement(views.get(0), node));
        for (int i = 1; i < 6; i++) {
            fence.adopted(new Placement(views.get(i), node));
        }
        return fence;
    }

    /** A key whose three replicas under the read switch hold a and x ({@code moved}), or whose x's join left alone. */
    private String key(boolean moved) {
        Placement readSwitch = new Placement(views.get(3), NODES.get(0));
        return IntStream.range(0, 10_000).mapToObj(i -> "k" + i).filter(id -> {
            byte[] key = id.getBytes(StandardCharsets.UTF_8);
            List<URI> read = readSwitch.readReplicas(key, 3).stream().map(Node::url).toList();
            boolean touched = !readSwitch.oldReplicas(key, 3).equals(readSwitch.newReplicas(key, 3));
            return moved ? touched && read.contains(NODES.get(0)) && read.contains(X) : !touched;
        }).findFirst().orElseThrow();
    }

    private void store(String id, Record record, URI... nodes) {
        for (URI node : nodes) {
            stores.get(node).write(id, record).block();
        }
    }

    private static Record value(long timestamp, String text) {
        return Record.value(timestamp, text.getBytes(StandardCharsets.UTF_8), 3, 0);
    }

    @Test
    void aReadRefusedAsStaleIsPlacedAgainUnderTheNewerViewAndSeesTheLatestWrite() {
        String id = key(true);
        store(id, value(1, "before"), NODES.get(0), NODES.get(1), NODES.get(2));
        store(id, value(2, "after the rollback"), NODES.get(1), NODES.get(2)); // a 2/3 write a was cut off from

        Optional<Record> read = coordinator.get(id, TWO_OF_THREE).block(Duration.ofSeconds(10));

        assertThat(read).hasValueSatisfying(record -> assertThat(new String(record.value(), StandardCharsets.UTF_8))
                .isEqualTo("after the rollback"));
        assertThat(membership.epoch()).as("a took the newer view").isEqualTo(6);
        assertThat(stores.get(X).read(id).block()).as("nothing repaired onto x").isEmpty();
    }

    @Test
    void aWriteRefusedAsStaleLandsOnlyOnTheReplicasOfTheNewerView() throws InterruptedException {
        String id = key(true);
        stores.get(NODES.get(1)).writesDelayed(Duration.ofMillis(200)); // b slow: the answer comes before its copy
        CountDownLatch settled = new CountDownLatch(1);

        coordinator.write(new WriteRequest(id, "v".getBytes(StandardCharsets.UTF_8), TWO_OF_THREE, null),
                settled::countDown).block(Duration.ofSeconds(10));

        // the answer comes with the first 2 acks; the third replica's copy may land just after it
        assertThat(settled.await(10, TimeUnit.SECONDS)).as("every replica call of the write ended").isTrue();
        assertThat(stores.get(X).read(id).block()).as("no copy on x, which is no replica").isEmpty();
        for (URI node : NODES) {
            assertThat(stores.get(node).read(id).block()).as("%s", node).isPresent();
        }
        assertThat(membership.epoch()).isEqualTo(6);
    }

    @Test
    void aKeyTheRollbackLeftAsItWasIsServedUnderTheOlderViewWithoutARetry() {
        String id = key(false);
        store(id, value(1, "kept"), NODES.get(0), NODES.get(1), NODES.get(2));

        assertThat(coordinator.get(id, TWO_OF_THREE).block(Duration.ofSeconds(10))).isPresent();
        coordinator.write(new WriteRequest(id, "v".getBytes(StandardCharsets.UTF_8), TWO_OF_THREE, null))
                .block(Duration.ofSeconds(10));

        assertThat(membership.epoch()).as("no replica refused, so a fetched no view").isEqualTo(4);
    }

    @Test
    void aReadRefusedAgainUnderTheNextStepIsPlacedAgainUntilItsViewIsTheReplicas() {
        oneStepAhead = true;
        String id = key(true);
        store(id, value(1, "before"), NODES.get(0), NODES.get(1), NODES.get(2));
        store(id, value(2, "after the rollback"), NODES.get(1), NODES.get(2));

        Optional<Record> read = coordinator.get(id, TWO_OF_THREE).block(Duration.ofSeconds(10));

        assertThat(read).hasValueSatisfying(record -> assertThat(new String(record.value(), StandardCharsets.UTF_8))
                .isEqualTo("after the rollback"));
        assertThat(membership.epoch()).as("a took each step the replicas named").isEqualTo(6);
    }

    @Test
    void aCoordinatorThatCannotCatchUpAnswersTheRefusal() {
        catchUp = false;
        String id = key(true);

        assertThatThrownBy(() -> coordinator.get(id, TWO_OF_THREE).block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(QuorumNotReachedException.class, failure -> {
                    assertThat(failure.refusedOnly()).as("a 503 with Retry-After, not a 504").isTrue();
                    assertThat(failure.firstRefusal().reason()).isEqualTo(OverloadReason.STALE_EPOCH);
                });
        assertThat(membership.epoch()).isEqualTo(4);
    }

    /**
     * A peer replica as the record handler serves it: refuses a call its fence does not admit (nothing read or
     * applied), and its answer hands its view to the coordinator (here: adopts epochs 5 and 6 there, off the
     * caller's thread, as the catch-up does on the bounded-elastic scheduler).
     */
    private final class FencedReplica implements Replica {
        private final InMemoryReplica store;
        private final EpochFence fence;

        FencedReplica(InMemoryReplica store, EpochFence fence) {
            this.store = store;
            this.fence = fence;
        }

        @Override
        public Mono<Optional<Record>> read(String id) {
            return store.read(id);
        }

        @Override
        public Mono<Optional<Record>> read(String id, int from, long epoch) {
            return admits(epoch, id, from) ? store.read(id) : refused();
        }

        @Override
        public Mono<Boolean> write(String id, Record record) {
            return store.write(id, record);
        }

        @Override
        public Mono<Boolean> write(String id, Record record, long epoch) {
            return admits(epoch, id, record.from()) ? store.write(id, record) : refused();
        }

        private boolean admits(long epoch, String id, int from) {
            return fence.admits(epoch, id.getBytes(StandardCharsets.UTF_8), from);
        }

        private <T> Mono<T> refused() {
            if (oneStepAhead) {
                int next = (int) Math.min(membership.epoch() + 1, fence.epoch());
                Schedulers.boundedElastic().schedule(() -> membership.adopt(views.get(next - 1)));
                return Mono.error(OverloadedException.staleEpoch(next, "stale"));
            }
            if (catchUp) {
                Schedulers.boundedElastic().schedule(() -> {
                    membership.adopt(views.get(4));
                    membership.adopt(views.get(5));
                });
            }
            return Mono.error(OverloadedException.staleEpoch(fence.epoch(), "stale"));
        }

        @Override
        public Flux<KeyedRecord> range(String start, String end) {
            return store.range(start, end);
        }

        @Override
        public int readRank() {
            return store.readRank();
        }
    }
}
