package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dht.hints.window} and {@code dht.hints.max-size} on 2-node clusters whose node 1 is stopped: hints
 * beyond them are dropped and counted, and client writes still succeed.
 */
class HintBoundsTest {
    /** Event loop lag tolerated before requests get 503: these tests are not about overload, and run on busy machines. */
    static final String LAG = "10s";

    @Test
    void noNewHintsForAPeerDownLongerThanTheWindow(@TempDir Path root) throws InterruptedException {
        try (InProcessCluster cluster = InProcessCluster.start(2, root, Map.of("dht.hints.window", "1s", "dht.max-event-loop-lag", LAG))) {
            cluster.stop(1);
            String prefix = "window-" + UUID.randomUUID() + "-";
            assertThat(cluster.client(0).put(prefix + "first", "v", "1/2")).isEqualTo(201);
            HintedHandoffTest.awaitTrue("the first failed write kept as a hint", () -> count(cluster, "dht.hints.stored") == 1);

            AtomicInteger writes = new AtomicInteger();
            // each poll writes once more: the first write after the 1-s window is dropped
            await("a hint dropped once node 1 was down for 1 s").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100)).until(() -> {
                        assertThat(cluster.client(0).put(prefix + writes.getAndIncrement(), "v", "1/2")).isEqualTo(201);
                        return dropped(cluster, "window") > 0;
                    });
            double stored = count(cluster, "dht.hints.stored");
            for (int i = 0; i < 5; i++) {
                assertThat(cluster.client(0).put(prefix + "late-" + i, "v", "1/2")).isEqualTo(201);
            }
            HintedHandoffTest.awaitTrue("later writes dropped too", () -> dropped(cluster, "window") >= 6);
            assertThat(count(cluster, "dht.hints.stored")).as("no hint kept after the window").isEqualTo(stored);
        }
    }

    @Test
    void aFullHintStoreDropsNewHintsNotWrites(@TempDir Path root) throws InterruptedException {
        try (InProcessCluster cluster = InProcessCluster.start(2, root, Map.of("dht.hints.max-size", "2KB", "dht.max-event-loop-lag", LAG))) {
            cluster.stop(1);
            String value = "x".repeat(100);
            for (int i = 0; i < 50; i++) {
                assertThat(cluster.client(0).put("full-" + UUID.randomUUID(), value, "1/2")).isEqualTo(201);
            }
            HintedHandoffTest.awaitTrue("every hint stored or dropped",
                    () -> count(cluster, "dht.hints.stored") + dropped(cluster, "full") == 50);
            assertThat(count(cluster, "dht.hints.stored")).as("hints that fit").isPositive();
            assertThat(dropped(cluster, "full")).as("hints that did not").isPositive();
            assertThat(cluster.bean(0, MeterRegistry.class).get("dht.hints.size").gauge().value())
                    .as("bytes kept").isLessThanOrEqualTo(2048.0);
        }
    }

    @Test
    void replayGoesNoFasterThanTheReplayRate(@TempDir Path root) throws InterruptedException {
        try (InProcessCluster cluster = InProcessCluster.start(2, root, Map.of("dht.hints.replay-rate", "20", "dht.max-event-loop-lag", LAG))) {
            cluster.stop(1);
            String prefix = "paced-" + UUID.randomUUID() + "-";
            for (int i = 0; i < 100; i++) {
                assertThat(cluster.client(0).put(prefix + i, "v", "1/2")).isEqualTo(201);
            }
            HintedHandoffTest.awaitTrue("100 hints kept", () -> count(cluster, "dht.hints.stored") == 100);
            cluster.start(1);
            HintedHandoffTest.awaitTrue("the first hint replayed", () -> count(cluster, "dht.hints.replayed") > 0);
            long started = System.nanoTime();
            HintedHandoffTest.awaitTrue("every hint replayed", () -> count(cluster, "dht.hints.replayed") == 100);
            // 20 per second after a first slice of at most HintReplayer.BURST's worth (4 hints): 4.8 s, so 3 s or more
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        }
    }

    private static double count(InProcessCluster cluster, String counter) {
        return cluster.bean(0, MeterRegistry.class).get(counter).counter().count();
    }

    private static double dropped(InProcessCluster cluster, String reason) {
        return cluster.bean(0, MeterRegistry.class).get("dht.hints.dropped").tag("reason", reason).counter().count();
    }
}
