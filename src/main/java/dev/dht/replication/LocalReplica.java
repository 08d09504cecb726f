package dev.dht.replication;

import dev.dht.node.RebuildGate;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * This node as a replica: calls its {@link LocalStore} in-process (no HTTP to itself). While the node rebuilds
 * its store ({@link RebuildGate}) reads fail at once with {@link RebuildGate#refusal()}, so
 * the coordinator asks another replica.
 */
public final class LocalReplica implements Replica {
    private final LocalStore store;
    private final RebuildGate rebuild;

    /** A replica that answers reads whenever {@code rebuild} is open. */
    public LocalReplica(LocalStore store, RebuildGate rebuild) {
        this.store = store;
        this.rebuild = rebuild;
    }

    /** A replica that always answers reads (no rebuild). */
    public LocalReplica(LocalStore store) {
        this(store, RebuildGate.open());
    }

    @Override
    public Mono<Optional<Record>> read(String id) {
        if (rebuild.isRebuilding()) {
            return Mono.error(RebuildGate.refusal());
        }
        return store.read(id.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public Mono<Boolean> write(String id, Record record) {
        return store.write(id.getBytes(StandardCharsets.UTF_8), record);
    }

    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        return store.range(start.getBytes(StandardCharsets.UTF_8), end == null ? null : end.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public int readRank() {
        return IN_PROCESS;
    }

    @Override
    public boolean isLocal() {
        return true;
    }
}
