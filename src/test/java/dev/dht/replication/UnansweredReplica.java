package dev.dht.replication;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Test fixture: a peer whose calls go unanswered (a partition: they neither succeed nor fail), except its writes
 * once the test emits into {@link #writeAnswer}.
 */
final class UnansweredReplica implements Replica {
    /** Answers every write, past and later, once emitted; never, if the test emits nothing. */
    final Sinks.One<Boolean> writeAnswer = Sinks.one();
    private final int readRank;

    /** @param readRank the rank reads see, e.g. {@link #PEER_DOWN} for a partitioned peer */
    UnansweredReplica(int readRank) {
        this.readRank = readRank;
    }

    @Override
    public Mono<Optional<Record>> read(String id) {
        return Mono.never();
    }

    @Override
    public Mono<Boolean> write(String id, Record record) {
        return writeAnswer.asMono();
    }

    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        return Flux.never();
    }

    @Override
    public int readRank() {
        return readRank;
    }
}
