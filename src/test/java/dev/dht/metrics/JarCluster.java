package dev.dht.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A cluster of real node processes of {@code target/dht.jar} on free loopback ports, with a generated cluster
 * secret and a data directory per node under a given directory. A node can be stopped (SIGTERM, graceful) and
 * started again on its port and data. Each node's output goes to {@code node-I.log} beside its data.
 */
final class JarCluster implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path jar;
    private final Path dir;
    private final List<Integer> ports;
    private final String secret;
    private final Process[] processes;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private JarCluster(Path jar, Path dir, List<Integer> ports) {
        this.jar = jar;
        this.dir = dir;
        this.ports = List.copyOf(ports);
        byte[] secretBytes = new byte[24];
        new SecureRandom().nextBytes(secretBytes);
        this.secret = HexFormat.of().formatHex(secretBytes);
        this.processes = new Process[ports.size()];
    }

    /** Starts {@code size} nodes of {@code jar} and waits until every one answers {@code /v0/status} with 200. */
    static JarCluster start(Path jar, int size, Path dir) throws IOException, InterruptedException {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ports.add(freePort());
        }
        Files.createDirectories(dir);
        JarCluster cluster = new JarCluster(jar, dir, ports);
        try {
            for (int i = 0; i < size; i++) {
                cluster.launch(i);
            }
            for (int i = 0; i < size; i++) {
                cluster.awaitReady(i);
            }
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /** Base URLs of the nodes, {@code http://localhost:PORT}, in order; also their {@code node} metric tag. */
    List<String> urls() {
        return ports.stream().map(port -> "http://localhost:" + port).toList();
    }

    /** {@code localhost:PORT} of every node, as Prometheus targets. */
    List<String> hostPorts() {
        return ports.stream().map(port -> "localhost:" + port).toList();
    }

    /** Stops node {@code index} gracefully (SIGTERM) and waits for it to exit. */
    void stop(int index) {
        terminate(processes[index]);
    }

    /** Starts node {@code index} again on its port and data, and waits until it is ready. */
    void restart(int index) throws IOException, InterruptedException {
        launch(index);
        awaitReady(index);
    }

    @Override
    public void close() {
        for (Process process : processes) {
            if (process != null) {
                process.destroy();    // all at once, then wait for each
            }
        }
        for (Process process : processes) {
            if (process != null) {
                terminate(process);
            }
        }
    }

    /** Ends {@code process}: SIGTERM, up to 30 s for it to exit, then SIGKILL. */
    static void terminate(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void launch(int index) throws IOException {
        int port = ports.get(index);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-jar", jar.toString(),
                "--server.port=" + port,
                "--dht.self=" + urls().get(index),
                "--dht.nodes=" + String.join(",", urls()),
                "--dht.data-dir=" + dir.resolve("data-" + index).toAbsolutePath())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log(index).toFile()));
        builder.environment().put("DHT_CLUSTER_SECRET", secret);
        processes[index] = builder.start();
    }

    private void awaitReady(int index) throws InterruptedException {
        URI status = URI.create(urls().get(index) + "/v0/status");
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!processes[index].isAlive()) {
                throw new IllegalStateException("node " + urls().get(index) + " exited with "
                        + processes[index].exitValue() + " while starting; its output:\n" + tail(log(index)));
            }
            try {
                HttpRequest request = HttpRequest.newBuilder(status).timeout(Duration.ofSeconds(1)).build();
                if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("node " + urls().get(index) + " not ready within " + START_TIMEOUT
                + "; its output:\n" + tail(log(index)));
    }

    private Path log(int index) {
        return dir.resolve("node-" + index + ".log");
    }

    static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port", e);
        }
    }
}
