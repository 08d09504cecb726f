package dev.dht.replication;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One replica of a key as the coordinator sees it: this node's own store ({@link LocalReplica}) or a peer
 * reached over the internal protocol ({@link RemoteReplica}). Methods return cold Monos and never block.
 */
public interface Replica {

    /** The replica's record for {@code id}, tombstones included; empty Optional if it has none. */
    Mono<Optional<Record>> read(String id);

    /**
     * Asks the replica to apply {@code record} under last-write-wins. Emits once the replica has it durably
     * (an older record is acknowledged too, without being written).
     */
    Mono<Boolean> write(String id, Record record);

    /**
     * {@link #read(String)} of a key placed with {@code from} replicas under the view of {@code epoch}: a peer sends
     * both, and refuses the call ({@link dev.dht.failure.OverloadedException} of
     * {@link dev.dht.failure.OverloadReason#STALE_EPOCH}) if a step it took since that view moved the key's replicas
     * ({@link dev.dht.cluster.EpochFence}). This node's own store is never behind its own view: the default ignores
     * both.
     */
    default Mono<Optional<Record>> read(String id, int from, long epoch) {
        return read(id);
    }

    /**
     * {@link #write(String, Record)} placed under the view of {@code epoch} (its {@code from} is the record's):
     * refused by a peer, nothing applied, as {@link #read(String, int, long)}.
     */
    default Mono<Boolean> write(String id, Record record, long epoch) {
        return write(id, record);
    }

    /**
     * The replica's local records in {@code [start, end)} (UTF-8 byte order), tombstones included, with
     * backpressure. Fails with {@link RangeUnavailableException} if the replica cannot serve it all.
     *
     * @param end exclusive bound, or null for no bound
     */
    Flux<KeyedRecord> range(String start, String end);

    /**
     * How early a read that needs only some replicas asks this one, lowest first: {@link #IN_PROCESS},
     * {@link #PEER_UP}, {@link #PEER_SLOW} or {@link #PEER_DOWN}. A minimal snitch (after Cassandra's, which ranks
     * replicas by proximity and recent latency): it uses only where the replica is, whether its last call
     * succeeded, whether it is answering the calls outstanding to it and how fast it answered lately
     * ({@link OutstandingCalls}). Non-blocking.
     */
    int readRank();

    /** Whether this is this node's own store, reached in-process ({@link LocalReplica}); false for a peer. */
    default boolean isLocal() {
        return false;
    }

    /** {@link #readRank} of this node's own store: no network hop. */
    int IN_PROCESS = 0;
    /** {@link #readRank} of a peer whose last call succeeded and that is answering. */
    int PEER_UP = 1;
    /**
     * {@link #readRank} of a peer whose last call succeeded but that answers later than the speculative retry
     * delay (on average, or it has left its outstanding calls unanswered that long): asked after the peers that
     * answer in time, so reads do not wait for it, but before a peer whose last call failed. A peer merely slow,
     * or starved of CPU along with the whole machine, is slow now and then; one cut off by a partition or dead
     * has failed calls.
     */
    int PEER_SLOW = 2;
    /** {@link #readRank} of a peer whose last call failed (a timeout, a refused connection): asked last. */
    int PEER_DOWN = 3;
}
