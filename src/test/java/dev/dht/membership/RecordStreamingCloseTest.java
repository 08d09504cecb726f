package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.node.HybridLogicalClock;
import dev.dht.peer.NoEpochTracker;
import dev.dht.peer.PeerClient;
import dev.dht.storage.LevelDbRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.StorageEngine;
import dev.dht.storage.StorageScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * A joiner whose only source refuses connections asks it again every {@link RecordStreaming#RETRY_DELAY} while it
 * runs; once the node stops ({@link RecordStreaming#close}) the pull fails instead of retrying for ever (on
 * the stopped node's closed event loops, until the JVM exits).
 */
class RecordStreamingCloseTest {
    private static final URI JOINER = URI.create("http://joiner:8080");

    @TempDir
    Path dataDir;

    @Test
    void aStoppedNodeStopsAskingAFailingSourceAgain() throws Exception {
        URI source = URI.create("http://127.0.0.1:" + closedPort());
        ClusterView streaming = ClusterView.initial(List.of(source), 3).withJoining(JOINER).advanced();
        Membership membership = new Membership(JOINER, streaming, null);
        PeerClient peers = new PeerClient(WebClient.create(), "secret", new ReplicaCallMetrics(new SimpleMeterRegistry()),
                Duration.ofSeconds(5), Duration.ofSeconds(5), NoEpochTracker.INSTANCE);
        LocalStore store = new LocalStore(LevelDbRecordRepository.open(dataDir.resolve("store"), StorageEngine.JAVA,
                false), new StorageScheduler(1, 64, "streaming-close-test-storage"), new HybridLogicalClock());
        RecordStreaming streamingHere = new RecordStreaming(membership, store, () -> peers, dataDir, 1000,
                new SimpleMeterRegistry(), Set::of);
        AtomicReference<String> outcome = new AtomicReference<>();
        Disposable pull = streamingHere.pullAll(streaming.epoch())
                .subscribe(done -> { }, error -> outcome.set("failed: " + error), () -> outcome.set("completed"));
        try {
            sleep(RecordStreaming.RETRY_DELAY.plusSeconds(1)); // at least one retry
            assertThat(outcome.get()).as("retrying while the node runs").isNull();

            streamingHere.close();
            long deadline = System.nanoTime() + RecordStreaming.RETRY_DELAY.multipliedBy(3).toNanos();
            while (outcome.get() == null && System.nanoTime() < deadline) {
                sleep(Duration.ofMillis(50));
            }
            assertThat(outcome.get()).as("the pull after close").startsWith("failed");
        } finally {
            pull.dispose();
            store.close();
        }
    }

    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
