package dev.dht.replication;

import dev.dht.storage.Record;
import dev.dht.storage.KeyedRecord;
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
     * The replica's local records in {@code [start, end)} (UTF-8 byte order), tombstones included, with
     * backpressure. Fails with {@link RangeUnavailableException} if the replica cannot serve it all.
     *
     * @param end exclusive bound, or null for no bound
     */
    Flux<KeyedRecord> range(String start, String end);
}
