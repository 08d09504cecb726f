package dev.dht.metrics;

import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Prometheus server (the {@code prometheus} binary, e.g. Debian's package) on a free loopback port, with
 * a temporary configuration that scrapes {@code /actuator/prometheus} of given targets every second, and its
 * HTTP API for instant queries. Its output goes to {@code prometheus.log} in its directory.
 */
final class PrometheusServer implements AutoCloseable {
    /** Scrape interval of the temporary configuration. */
    static final Duration SCRAPE_INTERVAL = Duration.ofSeconds(1);

    private final Process process;
    private final URI base;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private PrometheusServer(Process process, URI base, Path log) {
        this.process = process;
        this.base = base;
        this.log = log;
    }

    /** The {@code prometheus} executable on the PATH, if there is one. */
    static Optional<Path> binary() {
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.of(path.split(java.io.File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, "prometheus"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    /** Starts {@code binary} scraping {@code targets} (host:port) and waits until it is ready. */
    static PrometheusServer start(Path binary, List<String> targets, Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, String.join("\n",
                "global:",
                "  scrape_interval: " + SCRAPE_INTERVAL.toSeconds() + "s",
                "  scrape_timeout: " + SCRAPE_INTERVAL.toSeconds() + "s",
                "scrape_configs:",
                "  - job_name: dht",
                "    metrics_path: /actuator/prometheus",
                "    static_configs:",
                "      - targets: [" + targets.stream().map(t -> "'" + t + "'").collect(Collectors.joining(", ")) + "]",
                ""));
        int port = NodeProcess.freePort();
        Path log = dir.resolve("prometheus.log");
        Process process = new ProcessBuilder(binary.toString(),
                "--config.file=" + config,
                "--web.listen-address=127.0.0.1:" + port,
                "--storage.tsdb.path=" + dir.resolve("tsdb"))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        PrometheusServer server = new PrometheusServer(process, URI.create("http://127.0.0.1:" + port), log);
        try {
            server.awaitReady(Duration.ofSeconds(30));
            return server;
        } catch (RuntimeException | InterruptedException e) {
            server.close();
            throw e;
        }
    }

    /**
     * Evaluates {@code promql} now ({@code /api/v1/query}) and returns {@code data.result}.
     *
     * @throws AssertionError with Prometheus' message if the query is rejected
     */
    JsonNode query(String promql) throws IOException, InterruptedException {
        JsonNode answer = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        if (!"success".equals(answer.path("status").asString())) {
            throw new AssertionError("Prometheus rejected " + promql + ": " + answer.path("errorType").asString()
                    + ": " + answer.path("error").asString());
        }
        return answer.path("data").path("result");
    }

    /**
     * Waits until every target is up and was scraped after {@code instant}.
     *
     * @throws IllegalStateException listing the targets' state on timeout
     */
    void awaitScrapedAfter(Instant instant, int targets, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        String state = "";
        while (System.nanoTime() < deadline) {
            JsonNode active = get("/api/v1/targets?state=active").path("data").path("activeTargets");
            state = active.toString();
            long fresh = active.values().stream()
                    .filter(target -> "up".equals(target.path("health").asString()))
                    .filter(target -> Instant.parse(target.path("lastScrape").asString()).isAfter(instant))
                    .count();
            if (fresh == targets) {
                return;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("not all " + targets + " targets up and scraped after " + instant + " within "
                + timeout + ": " + state);
    }

    @Override
    public void close() {
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

    private void awaitReady(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("prometheus exited with " + process.exitValue() + ":\n"
                        + tail(log));
            }
            try {
                HttpRequest request = HttpRequest.newBuilder(base.resolve("/-/ready")).timeout(Duration.ofSeconds(1)).build();
                if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("prometheus not ready within " + timeout + ":\n" + tail(log));
    }

    private JsonNode get(String pathAndQuery) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        return JsonMapper.shared().readTree(response.body());
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }
}
