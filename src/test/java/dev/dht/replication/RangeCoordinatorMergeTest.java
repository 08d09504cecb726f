package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.Record;
import dev.dht.testing.SettableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A range merged over three in-memory replicas that hold different versions of the same keys, with no sockets and
 * a wall clock the test sets: one entry per key, the newest version whichever replica holds it, tombstones and
 * expired values left out (with the older versions they hide), in unsigned UTF-8 key order.
 */
class RangeCoordinatorMergeTest {
    private final SettableClock wall = new SettableClock(1_700_000_000_000L);
    private final HybridLogicalClock clock = new HybridLogicalClock(wall);
    private final InMemoryReplica a = new InMemoryReplica(Replica.IN_PROCESS);
    private final InMemoryReplica b = new InMemoryReplica(Replica.PEER_UP);
    private final InMemoryReplica c = new InMemoryReplica(Replica.PEER_UP);
    private final RangeCoordinator ranges = new RangeCoordinator(List.of(a, b, c), clock);
    private final long older = clock.now();
    private final long newer = clock.now();
    private final long newest = clock.now();

    @Test
    void eachKeyOnceWithItsNewestLiveVersionInKeyOrder() {
        // the newest version on each replica in turn, and on the one listed last as well as first
        write("k1", a, Record.value(newer, bytes("k1 new")));
        write("k1", b, Record.value(older, bytes("k1 old")));
        write("k2", b, Record.value(newer, bytes("k2 new")));
        write("k2", a, Record.value(older, bytes("k2 old")));
        write("k2", c, Record.value(older, bytes("k2 old")));
        write("k3", c, Record.value(newest, bytes("k3 newest")));
        write("k3", b, Record.value(newer, bytes("k3 new")));
        write("k3", a, Record.value(older, bytes("k3 old")));
        // a newer value over an older tombstone; a key on one replica only
        write("k4", a, Record.tombstone(older));
        write("k4", c, Record.value(newer, bytes("k4 written again")));
        write("k5", b, Record.value(older, bytes("k5 alone")));
        // a newer live value over an older expired one
        write("k6", a, Record.value(older, bytes("k6 expired"), 0, wall.millis() - 1));
        write("k6", b, Record.value(newer, bytes("k6 live"), 0, wall.millis() + 60_000));
        // keys whose UTF-8 bytes sort after every ASCII key (unsigned order), on different replicas
        write("é", c, Record.value(newer, bytes("é new")));
        write("é", a, Record.value(older, bytes("é old")));
        write("z", b, Record.value(newer, bytes("z")));

        assertThat(range()).containsExactly("k1=k1 new", "k2=k2 new", "k3=k3 newest", "k4=k4 written again",
                "k5=k5 alone", "k6=k6 live", "z=z", "é=é new");
    }

    @Test
    void aNewerTombstoneHidesTheKeyWhicheverReplicaHoldsIt() {
        write("t1", a, Record.tombstone(newer));
        write("t1", b, Record.value(older, bytes("t1 old")));
        write("t1", c, Record.value(older, bytes("t1 old")));
        write("t2", b, Record.value(older, bytes("t2 old")));
        write("t2", c, Record.tombstone(newer));
        write("t3", a, Record.tombstone(newer));
        write("u", b, Record.value(older, bytes("u")));

        assertThat(range()).containsExactly("u=u");
    }

    @Test
    void aNewerExpiredValueHidesTheOlderVersionsOfItsKey() {
        write("x1", a, Record.value(older, bytes("x1 old")));
        write("x1", c, Record.value(newer, bytes("x1 expired"), 0, wall.millis() + 1_000));
        write("x2", b, Record.value(newer, bytes("x2 live"), 0, wall.millis() + 60_000));
        wall.advance(Duration.ofSeconds(1));

        assertThat(range()).containsExactly("x2=x2 live");
    }

    private void write(String id, InMemoryReplica replica, Record record) {
        replica.write(id, record).block();
    }

    /** The merged range over every key, as "key=value" entries in the order streamed. */
    private List<String> range() {
        return ranges.range("", null)
                .map(entry -> text(entry.key()) + "=" + text(entry.record().value()))
                .collectList().block();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
