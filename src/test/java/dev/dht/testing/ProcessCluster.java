package dev.dht.testing;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A cluster of real node processes of {@code target/dht.jar} ({@link NodeProcess}) on free loopback ports, with
 * a generated cluster secret and a data directory per node. A node can be stopped (SIGTERM, graceful) and
 * started again on its port and data. Output goes to {@code node-I.log} beside the data.
 */
public final class ProcessCluster implements AutoCloseable {
    /** Generous: a node takes over a minute to start on a machine shared with other builds. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);

    private final Path dir;
    private final List<Integer> ports;
    private final List<String> jvmOptions;
    private final List<String> commandPrefix;
    private final String secret;
    private final NodeProcess[] nodes;

    private ProcessCluster(Path dir, List<Integer> ports, List<String> jvmOptions, List<String> commandPrefix) {
        this.dir = dir;
        this.ports = List.copyOf(ports);
        this.jvmOptions = List.copyOf(jvmOptions);
        this.commandPrefix = List.copyOf(commandPrefix);
        byte[] secretBytes = new byte[24];
        new SecureRandom().nextBytes(secretBytes);
        this.secret = HexFormat.of().formatHex(secretBytes);
        this.nodes = new NodeProcess[ports.size()];
    }

    /** Starts {@code size} nodes with {@code jvmOptions} (e.g. -Xmx128m) and waits until each answers /v0/status. */
    public static ProcessCluster start(int size, Path dir, List<String> jvmOptions) throws IOException, InterruptedException {
        return start(size, dir, jvmOptions, List.of());
    }

    /**
     * As {@link #start(int, Path, List)}, every node's command line beginning with {@code commandPrefix}, e.g.
     * {@code taskset -c 1} to hold the nodes to one CPU (the prefix must exec the JVM, see {@link NodeProcess}).
     */
    public static ProcessCluster start(int size, Path dir, List<String> jvmOptions, List<String> commandPrefix)
            throws IOException, InterruptedException {
        List<Integer> ports = NodeProcess.freePorts(size);
        Files.createDirectories(dir);
        ProcessCluster cluster = new ProcessCluster(dir, ports, jvmOptions, commandPrefix);
        try {
            for (int i = 0; i < size; i++) {
                cluster.launch(i);
            }
            for (int i = 0; i < size; i++) {
                cluster.nodes[i].awaitUp(START_TIMEOUT);
            }
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** Base URLs of the nodes, {@code http://localhost:PORT}, in order; also their {@code node} metric tag. */
    public List<String> urls() {
        return ports.stream().map(port -> "http://localhost:" + port).toList();
    }

    /** {@code localhost:PORT} of every node, as Prometheus targets. */
    public List<String> hostPorts() {
        return ports.stream().map(port -> "localhost:" + port).toList();
    }

    /** The cluster secret the nodes share, for tests that read a node's own records over /internal/*. */
    public String secret() {
        return secret;
    }

    /** Base URL of node {@code index}. */
    public URI url(int index) {
        return URI.create(urls().get(index));
    }

    /** The process of node {@code index} (null while stopped). */
    public NodeProcess node(int index) {
        return nodes[index];
    }

    /** Stops node {@code index} gracefully (SIGTERM) and waits for it to exit. */
    public void stop(int index) throws InterruptedException {
        nodes[index].terminate(Duration.ofSeconds(30));
        nodes[index] = null;
    }

    /**
     * SIGKILL to node {@code index} (a crash: no shutdown hook runs) and waits for it to go; {@link #restart} starts
     * it again.
     */
    public void kill(int index) throws InterruptedException {
        nodes[index].kill();
    }

    /** The data directory of node {@code index}, e.g. to empty it while the node is down (a lost disk). */
    public Path dataDir(int index) {
        return dir.resolve("data-" + index).toAbsolutePath();
    }

    /**
     * Starts node {@code index} again on its port and data, without waiting for it to be up; {@code arguments} are
     * added to its command line for this start only (e.g. {@code --dht.raft.recover=true}).
     */
    public void launchAgain(int index, String... arguments) throws IOException {
        launch(index, arguments);
    }

    /**
     * Starts every node again on its port and data at once (a power loss over, a whole StatefulSet recreated): each
     * launched right after the other, none waiting for another to be up, nor for itself. The nodes must be down.
     */
    public void launchAllAgain() throws IOException {
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] != null && nodes[i].isAlive()) {
                throw new IllegalStateException("node " + i + " still runs");
            }
        }
        for (int i = 0; i < nodes.length; i++) {
            launch(i);
        }
    }

    /** Starts node {@code index} again on its port and data, and waits until it is up. */
    public void restart(int index) throws IOException, InterruptedException {
        launch(index);
        nodes[index].awaitUp(START_TIMEOUT);
    }

    /** SIGTERM to every node, then waits for each (killing what does not exit in 30 s). */
    @Override
    public void close() {
        for (NodeProcess node : nodes) {
            if (node != null && node.isAlive()) {
                node.signalTerminate();
            }
        }
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] != null) {
                try {
                    nodes[i].awaitExit(Duration.ofSeconds(30));
                } catch (IllegalStateException stillRunning) {
                    nodes[i].close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    nodes[i].close();
                }
                nodes[i] = null;
            }
        }
    }

    private void launch(int index, String... extra) throws IOException {
        List<String> arguments = new ArrayList<>(List.of("--dht.self=" + urls().get(index),
                "--dht.nodes=" + String.join(",", urls()), "--dht.cluster-secret=" + secret));
        arguments.addAll(List.of(extra));
        nodes[index] = NodeProcess.start(commandPrefix, url(index), dataDir(index),
                dir.resolve("node-" + index + ".log"), jvmOptions, arguments.toArray(String[]::new));
    }
}
