package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Node;
import dev.dht.node.RebuildGate;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** A rebuild follows the view while it runs: it completes when every current peer's repair did, and only then. */
class NodeRebuildTest {
    private static final Node A = node(1);
    private static final Node B = node(2);
    private static final Node C = node(3);

    @Test
    void aPeerThatLeavesTheViewWhileItFailsIsLeftOutAndOneThatJoinsIsRepairedWith() {
        AtomicReference<List<Node>> peers = new AtomicReference<>(List.of(A, B));
        List<String> attempts = new CopyOnWriteArrayList<>();
        RebuildGate gate = new RebuildGate(true);
        NodeRebuild rebuild = new NodeRebuild(peers::get, peer -> {
            attempts.add(peer.url().toString());
            if (peer.equals(B)) {
                // a joiner rolled back and stopped: it fails, then leaves the view, and a new member comes in
                peers.set(List.of(A, C));
                return Mono.error(new IllegalStateException("connection refused"));
            }
            return Mono.just(result(peer));
        }, gate, List.of(), Duration.ofMillis(50));

        rebuild.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> !gate.isRebuilding());
        assertThat(attempts).containsExactly(A.url().toString(), B.url().toString(), C.url().toString());
    }

    @Test
    void aPeerThatStaysInTheViewIsAskedUntilItAnswersAndTheGateStaysClosedMeanwhile() {
        List<String> attempts = new CopyOnWriteArrayList<>();
        RebuildGate gate = new RebuildGate(true);
        NodeRebuild rebuild = new NodeRebuild(() -> List.of(A, B), peer -> {
            attempts.add(peer.url().toString());
            return peer.equals(B) && attempts.size() < 4 ? Mono.error(new IllegalStateException("down"))
                    : Mono.just(result(peer));
        }, gate, List.of(), Duration.ofMillis(50));

        rebuild.start();

        await().atMost(Duration.ofSeconds(10)).until(() -> !gate.isRebuilding());
        assertThat(attempts).containsExactly(A.url().toString(), B.url().toString(), B.url().toString(),
                B.url().toString());
    }

    private static Node node(int i) {
        return new Node(URI.create("http://127.0.0.1:" + (9000 + i)), false);
    }

    private static RepairResult result(Node peer) {
        return new RepairResult(peer.url().toString(), 1, 1, 10, 10, 0, 1, 1, null);
    }
}
