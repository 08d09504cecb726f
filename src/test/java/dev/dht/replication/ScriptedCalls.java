package dev.dht.replication;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Quorum tests with no sockets: each replica call is a given Mono (that succeeds, fails, is slow or never
 * answers), asked through a {@link ReplicaPlan} of stand-in replicas, one per call, in the calls' order.
 */
final class ScriptedCalls {

    private ScriptedCalls() {
    }

    /** All {@code calls} at once, the first {@code ack} successes in arrival order. */
    static <T> Mono<List<T>> firstAcks(String operation, List<Mono<T>> calls, int ack, Duration timeout) {
        List<Replica> replicas = standIns(calls.size(), -1);
        return QuorumCollector.firstAcks(ReplicaPlan.forWrite(operation, replicas, ack, timeout),
                replica -> calls.get(replicas.indexOf(replica)));
    }

    /**
     * A write of {@code calls}, {@code calls.get(local)} standing for this node's own store (-1: none does).
     */
    static <T> Mono<Void> awaitAcks(String operation, List<Mono<T>> calls, int local, int ack, Duration timeout) {
        List<Replica> replicas = standIns(calls.size(), local);
        return QuorumCollector.awaitAcks(ReplicaPlan.forWrite(operation, replicas, ack, timeout),
                replica -> calls.get(replicas.indexOf(replica)));
    }

    /**
     * A write during a membership change: {@code calls.get(i)} answers for replica {@code i}; the old replica set
     * is the replicas at {@code oldSet}, the new one those at {@code newSet}; replica {@code local} is this node's.
     */
    static <T> Mono<Void> awaitAcksInBoth(List<Mono<T>> calls, List<Integer> oldSet, List<Integer> newSet,
                                          int local, int ack, Duration timeout) {
        List<Replica> replicas = standIns(calls.size(), local);
        ReplicaPlan plan = ReplicaPlan.forWrite("PUT", oldSet.stream().map(replicas::get).toList(),
                newSet.stream().map(replicas::get).toList(), ack, timeout);
        return QuorumCollector.awaitAcks(plan, replica -> calls.get(replicas.indexOf(replica)));
    }

    /** {@code count} replicas that must not be called directly; the one at {@code local} is local. */
    private static List<Replica> standIns(int count, int local) {
        List<Replica> replicas = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            replicas.add(new StandIn(i == local));
        }
        return replicas;
    }

    /** A replica known only by its identity: the plan's calls come from the script, not from it. */
    private static final class StandIn implements Replica {
        private final boolean local;

        StandIn(boolean local) {
            this.local = local;
        }

        @Override
        public Mono<Optional<Record>> read(String id) {
            throw new UnsupportedOperationException("scripted");
        }

        @Override
        public Mono<Boolean> write(String id, Record record) {
            throw new UnsupportedOperationException("scripted");
        }

        @Override
        public Flux<KeyedRecord> range(String start, String end) {
            throw new UnsupportedOperationException("scripted");
        }

        @Override
        public int readRank() {
            return local ? IN_PROCESS : PEER_UP;
        }

        @Override
        public boolean isLocal() {
            return local;
        }
    }
}
