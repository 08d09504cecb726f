package dev.dht.replication;

import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import dev.dht.storage.KeyedRecord;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** This node as a replica: calls its {@link LocalStore} in-process (no HTTP to itself). */
public final class LocalReplica implements Replica {
    private final LocalStore store;

    public LocalReplica(LocalStore store) {
        this.store = store;
    }

    @Override
    public Mono<Optional<Record>> read(String id) {
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
}
