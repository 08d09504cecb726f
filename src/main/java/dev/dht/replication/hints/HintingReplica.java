package dev.dht.replication.hints;

import dev.dht.cluster.Node;
import dev.dht.replication.Replica;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A peer replica whose failed writes become hints: a write that fails, times out or is refused (503, a full
 * connection pool or write queue) is offered to {@link HintedHandoff} as the call fails, and still fails for its
 * caller, so a hint never counts towards {@code ack}. Client writes and read repairs alike go through it; both
 * only ever target a key's first {@code from} replicas, so a hint never adds a copy beyond them. Reads and ranges
 * pass through. Non-blocking: storing the hint runs on the hints thread.
 */
final class HintingReplica implements Replica {
    private final Node peer;
    private final Replica delegate;
    private final HintedHandoff handoff;

    HintingReplica(Node peer, Replica delegate, HintedHandoff handoff) {
        this.peer = peer;
        this.delegate = delegate;
        this.handoff = handoff;
    }

    @Override
    public Mono<Optional<Record>> read(String id) {
        return delegate.read(id);
    }

    @Override
    public Mono<Boolean> write(String id, Record record) {
        return delegate.write(id, record)
                .doOnError(error -> handoff.offer(peer, id.getBytes(StandardCharsets.UTF_8), record));
    }

    @Override
    public Mono<Optional<Record>> read(String id, int from, long epoch) {
        return delegate.read(id, from, epoch);
    }

    @Override
    public Mono<Boolean> write(String id, Record record, long epoch) {
        return delegate.write(id, record, epoch)
                .doOnError(error -> handoff.offer(peer, id.getBytes(StandardCharsets.UTF_8), record));
    }

    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        return delegate.range(start, end);
    }

    @Override
    public int readRank() {
        return delegate.readRank();
    }
}
