package dev.dht.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A cluster of real node processes of {@code target/dht.jar}, one per host of a {@link NamespaceNetwork}, each
 * started with {@code ip netns exec} and listening on port 8080 of its host's address, which is also its URL in
 * {@code dht.nodes}. A host can instead be relayed: its node listens on 127.0.0.1 only, and a {@link DelayingRelay}
 * process in the same namespace listens on the host's address and forwards to it, so every connection to that
 * node can be slowed ({@link #setRelayDelay}). Output goes to {@code node-I.log} (and {@code relay-I.log}) in the
 * directory. {@link #close()} kills the nodes (the network's removal kills whatever is left in the namespaces).
 */
public final class NamespaceCluster implements AutoCloseable {
    private static final int PORT = 8080;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    private final NamespaceNetwork network;
    private final String secret;
    private final NodeProcess[] nodes;
    private final List<Process> relays = new ArrayList<>();
    private final Writer[] relayControls;

    private NamespaceCluster(NamespaceNetwork network, int size) {
        this.network = network;
        byte[] secretBytes = new byte[24];
        new SecureRandom().nextBytes(secretBytes);
        this.secret = HexFormat.of().formatHex(secretBytes);
        this.nodes = new NodeProcess[size];
        this.relayControls = new Writer[size];
    }

    /**
     * Starts {@code size} nodes with {@code jvmOptions}, node {@code relayed} (-1 for none) behind a relay with no
     * delay, and waits until each answers /v0/status at its URL.
     */
    public static NamespaceCluster start(NamespaceNetwork network, int size, Path dir, List<String> jvmOptions,
            int relayed) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        NamespaceCluster cluster = new NamespaceCluster(network, size);
        try {
            List<String> urls = cluster.urls();
            for (int i = 0; i < size; i++) {
                List<String> args = new ArrayList<>(List.of("--dht.self=" + urls.get(i),
                        "--dht.nodes=" + String.join(",", urls), "--dht.cluster-secret=" + cluster.secret));
                if (i == relayed) {
                    args.add("--server.address=127.0.0.1");
                    cluster.startRelay(i, dir);
                }
                cluster.nodes[i] = NodeProcess.start(network.exec(i), cluster.url(i),
                        dir.resolve("data-" + i).toAbsolutePath(), dir.resolve("node-" + i + ".log"), jvmOptions,
                        args.toArray(String[]::new));
            }
            for (NodeProcess node : cluster.nodes) {
                node.awaitUp(START_TIMEOUT);
            }
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** URLs of the nodes, {@code http://ADDRESS:8080}, in order, as in {@code dht.nodes}. */
    public List<String> urls() {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < nodes.length; i++) {
            urls.add("http://" + network.address(i) + ":" + PORT);
        }
        return urls;
    }

    /** URL of node {@code index}. */
    public URI url(int index) {
        return URI.create(urls().get(index));
    }

    /** The cluster secret the nodes share, for reads of a node's own records over /internal/*. */
    public String secret() {
        return secret;
    }

    /**
     * Sets the delay of node {@code index}'s relay, in ms per chunk and direction; the relay applies it to what it
     * reads from then on (within milliseconds). Only for the node started relayed.
     */
    public void setRelayDelay(int index, int millis) throws IOException {
        relayControls[index].write(millis + "\n");
        relayControls[index].flush();
    }

    /** Kills every node and relay and waits for each to go. */
    @Override
    public void close() {
        for (NodeProcess node : nodes) {
            if (node != null) {
                node.close();
            }
        }
        for (Process relay : relays) {
            relay.destroyForcibly();
        }
    }

    private void startRelay(int index, Path dir) throws IOException {
        List<String> command = new ArrayList<>(network.exec(index));
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-cp", Path.of("target", "test-classes").toAbsolutePath().toString(), DelayingRelay.class.getName(),
                network.address(index), Integer.toString(PORT), "127.0.0.1", Integer.toString(PORT)));
        Process relay = new ProcessBuilder(command).redirectErrorStream(true).start();
        relays.add(relay);
        relayControls[index] = new OutputStreamWriter(relay.getOutputStream(), StandardCharsets.UTF_8);
        BufferedReader out = new BufferedReader(new InputStreamReader(relay.getInputStream(), StandardCharsets.UTF_8));
        String first = out.readLine();
        if (!"listening".equals(first)) {
            throw new IllegalStateException("relay of node " + index + " did not start: " + first);
        }
        Path log = dir.resolve("relay-" + index + ".log");
        Thread drain = new Thread(() -> {
            try {
                String line;
                while ((line = out.readLine()) != null) {
                    Files.writeString(log, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                }
            } catch (IOException ended) {
                // the relay exited
            }
        }, "relay-output-" + index);
        drain.setDaemon(true);
        drain.start();
    }
}
