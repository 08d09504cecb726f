package dev.dht.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A real S3-compatible server for tests: S3Proxy (org.gaul:s3proxy) over a local directory, run as a process of its
 * own from {@code target/s3proxy/s3proxy.jar} (copied there by the build): its dependencies (Jetty 11, Netty 4.1,
 * Reactor 3.4) clash with Spring Boot 4's on the test class path, so it gets its own JVM. Path-style addressing,
 * AWS signatures v2 or v4 with {@link #ACCESS_KEY} and {@link #SECRET_KEY}. {@link #close()} kills it.
 */
public final class S3ProxyServer implements AutoCloseable {
    /** The access key the server accepts. */
    public static final String ACCESS_KEY = "local-identity";
    /** The secret key the server accepts. */
    public static final String SECRET_KEY = "local-credential";
    private final Process process;
    private final URI endpoint;

    private S3ProxyServer(Process process, URI endpoint) {
        this.process = process;
        this.endpoint = endpoint;
    }

    /** The jar the build copies; tests that need the server are skipped where it is missing. */
    public static Path jar() {
        return Path.of("target", "s3proxy", "s3proxy.jar");
    }

    /** Starts a server keeping its buckets (directories) under {@code root}; waits until it answers. */
    public static S3ProxyServer start(Path root) throws IOException {
        int port = NodeProcess.freePort();
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        Path data = Files.createDirectories(root.resolve("data"));
        Path properties = root.resolve("s3proxy.conf");
        Files.writeString(properties, String.join("\n",
                "s3proxy.endpoint=" + endpoint,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + ACCESS_KEY,
                "s3proxy.credential=" + SECRET_KEY,
                "jclouds.provider=filesystem",
                "jclouds.filesystem.basedir=" + data.toAbsolutePath()) + "\n");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(List.of(java, "-Xmx256m", "-jar", jar().toAbsolutePath().toString(),
                "--properties", properties.toAbsolutePath().toString()))
                .redirectErrorStream(true)
                .redirectOutput(root.resolve("s3proxy.log").toFile())
                .start();
        S3ProxyServer server = new S3ProxyServer(process, endpoint);
        try {
            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                    .until(server::answers);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    private boolean answers() throws IOException {
        if (!process.isAlive()) {
            throw new UncheckedIOException(new IOException("S3Proxy exited with " + process.exitValue()));
        }
        HttpURLConnection connection = (HttpURLConnection) endpoint.toURL().openConnection();
        try {
            return connection.getResponseCode() > 0;
        } finally {
            connection.disconnect();
        }
    }

    /** The server's endpoint, {@code http://127.0.0.1:PORT}. */
    public URI endpoint() {
        return endpoint;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
