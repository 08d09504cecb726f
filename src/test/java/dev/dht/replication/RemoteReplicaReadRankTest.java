package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.peer.NoEpochTracker;
import dev.dht.peer.PeerClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * Where a read ranks a peer ({@link RemoteReplica#readRank}): a peer that takes calls and answers none (here a
 * socket that accepts and never replies) ranks slow once the stall threshold passes, so does one that answers
 * every call later than the threshold (a slow link), and a slow peer is asked
 * before one whose last call failed (a partitioned or dead peer), so that on a machine short of CPU, where the
 * healthy peer's calls stall now and then too, a read does not ask the partitioned one first.
 */
class RemoteReplicaReadRankTest {
    private static final Duration STALL = Duration.ofMillis(20);

    private final PeerHealth health = new PeerHealth();
    private final ReplicaCallMetrics metrics = new ReplicaCallMetrics(new SimpleMeterRegistry());
    private final List<Socket> accepted = new ArrayList<>();
    private final List<Disposable> calls = new ArrayList<>();
    private ServerSocket silentPeer;
    private Thread acceptor;

    @BeforeEach
    void openSilentPeer() throws IOException {
        silentPeer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!silentPeer.isClosed()) {
                try {
                    Socket socket = silentPeer.accept(); // read nothing, answer nothing: a stalled peer
                    synchronized (accepted) {
                        accepted.add(socket);
                    }
                } catch (IOException closed) {
                    return;
                }
            }
        }, "silent-peer");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void close() throws Exception {
        calls.forEach(Disposable::dispose);
        silentPeer.close();
        synchronized (accepted) {
            for (Socket socket : accepted) {
                socket.close();
            }
        }
        acceptor.join(TimeUnit.SECONDS.toMillis(5));
    }

    @Test
    void aPeerWithNoCallsOutstandingAndNoFailureRanksUp() {
        assertThat(replica(silentPeerNode()).readRank()).isEqualTo(Replica.PEER_UP);
    }

    @Test
    void aPeerLeavingACallUnansweredPastTheThresholdRanksSlow() throws Exception {
        RemoteReplica peer = replica(silentPeerNode());
        calls.add(peer.read("k").subscribe(record -> { }, error -> { }));
        awaitRank(peer, Replica.PEER_SLOW);
        assertThat(peer.readRank()).isEqualTo(Replica.PEER_SLOW);
    }

    @Test
    void aPeerWhoseLastCallFailedRanksBelowASlowOne() throws Exception {
        RemoteReplica stalled = replica(silentPeerNode());
        calls.add(stalled.read("k").subscribe(record -> { }, error -> { }));
        awaitRank(stalled, Replica.PEER_SLOW);
        Node cutOff = new Node(URI.create("http://127.0.0.1:9"), false);
        RemoteReplica partitioned = replica(cutOff);
        health.failed(cutOff, new IOException("connection timed out"));

        assertThat(partitioned.readRank()).isEqualTo(Replica.PEER_DOWN);
        List<RemoteReplica> readOrder = new ArrayList<>(List.of(partitioned, stalled));
        readOrder.sort(Comparator.comparingInt(Replica::readRank));
        assertThat(readOrder).as("peers in the order a read asks them").containsExactly(stalled, partitioned);
    }

    @Test
    void aPeerThatAnswersEveryCallLateRanksSlowBetweenItsCalls() throws Exception {
        HttpServer latePeer = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        latePeer.createContext("/", exchange -> {
            try {
                Thread.sleep(150); // a slow link: every answer comes, but late
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
        });
        latePeer.start();
        try {
            RemoteReplica peer = replica(new Node(URI.create("http://127.0.0.1:" + latePeer.getAddress().getPort()), false));
            for (int call = 0; call < 3; call++) {
                assertThat(peer.read("k" + call).block(Duration.ofSeconds(10))).as("a 404 answer").isEmpty();
            }
            assertThat(peer.readRank()).as("nothing outstanding, every answer 150 ms late").isEqualTo(Replica.PEER_SLOW);
        } finally {
            latePeer.stop(0);
        }
    }

    private Node silentPeerNode() {
        return new Node(URI.create("http://127.0.0.1:" + silentPeer.getLocalPort()), false);
    }

    private RemoteReplica replica(Node node) {
        PeerClient client = new PeerClient(WebClient.create(), "secret", metrics, Duration.ofSeconds(30),
                Duration.ofSeconds(30), NoEpochTracker.INSTANCE);
        return new RemoteReplica(node, client, health, metrics, 4, 1, STALL);
    }

    private static void awaitRank(RemoteReplica peer, int rank) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(peer::readRank, r -> r == rank);
    }
}
