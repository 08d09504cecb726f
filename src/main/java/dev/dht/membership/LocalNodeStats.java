package dev.dht.membership;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.peer.NodeStats;
import dev.dht.storage.RecordCount;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * This node's {@link NodeStats}: its store's record count ({@link RecordCount}), its bytes on disk and the hints it
 * holds for each member of its view. Served to peers on {@code GET /internal/node/stats} and used for its own row of
 * {@link MemberStatus}. Non-blocking: the count's scan and the listing of the store's files run on the
 * bounded-elastic scheduler.
 */
public final class LocalNodeStats {
    private final Membership membership;
    private final RecordCount records;
    private final LongSupplier bytesOnDisk;
    private final ToLongFunction<String> hintsFor;

    /**
     * @param bytesOnDisk the store's files on disk, bytes (must not block long: a directory listing)
     * @param hintsFor    hints held for a peer, by its {@link Node#name()}
     */
    public LocalNodeStats(Membership membership, RecordCount records, LongSupplier bytesOnDisk,
                          ToLongFunction<String> hintsFor) {
        this.membership = membership;
        this.records = records;
        this.bytesOnDisk = bytesOnDisk;
        this.hintsFor = hintsFor;
    }

    /** The figures now; the record count may lag (see {@link RecordCount#current}). */
    public Mono<NodeStats> current() {
        return records.current()
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .publishOn(Schedulers.boundedElastic()) // the directory listing of bytesOnDisk
                .map(count -> stats(count.orElse(null)));
    }

    private NodeStats stats(Long count) {
        Map<String, Long> hints = new LinkedHashMap<>();
        for (Node member : membership.placement().members()) {
            long held = hintsFor.applyAsLong(member.name());
            if (held > 0) {
                hints.put(member.url().toString(), held);
            }
        }
        return new NodeStats(count, bytesOnDisk.getAsLong(), hints);
    }
}
