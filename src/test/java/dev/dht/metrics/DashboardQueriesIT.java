package dev.dht.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.ProcessCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Every PromQL expression of the Grafana dashboard ({@code config/grafana/dht-dashboard.json}) returns at least
 * one series from a real Prometheus that scraped a live 3-node cluster of {@code target/dht.jar} after a short
 * load of every kind: PUTs, GETs of present and absent keys, a DELETE, a range, requests with
 * {@code replicas=3/3}, and the same while one node is stopped (504s, failed replica calls, a peer down), then a
 * repair on demand.
 * The dashboard's {@code node} variable must list the three nodes.
 *
 * <p>Needs the {@code prometheus} binary (Debian package {@code prometheus}; CI installs it) and is skipped
 * without it. Runs in {@code verify}, after the jar is packaged.
 */
class DashboardQueriesIT {
    private static final Path DASHBOARD = Path.of("config", "grafana", "dht-dashboard.json");
    private static final Path JAR = Path.of("target", "dht.jar");
    /** Covers the whole test, so that every counter increase of the load is inside the rate window. */
    private static final String RATE_INTERVAL = "5m";
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((?:(.+),\\s*)?(\\w+)\\)");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void everyDashboardQueryReturnsSeriesFromALiveCluster(@TempDir Path tmp) throws Exception {
        Optional<Path> prometheus = PrometheusServer.binary();
        assumeTrue(prometheus.isPresent(), "skipped: no 'prometheus' binary on the PATH"
                + " (apt-get install --no-install-recommends prometheus); .ci/run installs it");
        assertThat(JAR).as("target/dht.jar (built by the package phase)").isRegularFile();
        assertThat(DASHBOARD).isRegularFile();
        GrafanaDashboard dashboard = GrafanaDashboard.read(DASHBOARD);
        List<GrafanaDashboard.Query> queries = dashboard.queries();
        assertThat(queries).as("PromQL expressions in " + DASHBOARD).isNotEmpty();

        try (ProcessCluster cluster = ProcessCluster.start(3, tmp.resolve("cluster"), List.of("-Xmx256m", "-XX:+UseSerialGC"));
             PrometheusServer server = PrometheusServer.start(prometheus.get(), cluster.hostPorts(), tmp.resolve("prometheus"))) {
            server.awaitScrapedAfter(Instant.now(), 3, Duration.ofSeconds(30));
            applyLoad(cluster);
            server.awaitScrapedAfter(Instant.now().plus(PrometheusServer.SCRAPE_INTERVAL), 3, Duration.ofSeconds(30));

            Map<String, String> variables = Map.of(
                    "node", cluster.urls().stream().map(DashboardQueriesIT::regexLiteral).collect(Collectors.joining("|", "(", ")")),
                    "__rate_interval", RATE_INTERVAL,
                    "__interval", "15s",
                    "__range", RATE_INTERVAL);
            List<String> empty = new ArrayList<>();
            for (GrafanaDashboard.Query query : queries) {
                String promql = GrafanaDashboard.render(query.expr(), variables);
                if (server.query(promql).isEmpty()) {
                    empty.add("'" + query.panel() + "': " + promql);
                }
            }
            assertThat(empty).as("dashboard queries that returned no series (of " + queries.size() + ")").isEmpty();

            for (GrafanaDashboard.Variable variable : dashboard.queryVariables()) {
                List<String> values = variableValues(server, variable);
                assertThat(values).as("values of the dashboard variable $" + variable.name()).isNotEmpty();
                if (variable.name().equals("node")) {
                    assertThat(values).containsAll(cluster.urls());
                }
            }
        }
    }

    /** Requests of every kind, then the same with one node stopped for a moment. */
    private void applyLoad(ProcessCluster cluster) throws Exception {
        List<String> nodes = cluster.urls();
        for (int i = 0; i < 30; i++) {
            assertThat(send("PUT", nodes.get(i % 3), "/v0/entity?id=k" + i, "value-" + i)).isEqualTo(201);
            assertThat(send("GET", nodes.get((i + 1) % 3), "/v0/entity?id=k" + i, null)).isEqualTo(200);
        }
        assertThat(send("GET", nodes.get(0), "/v0/entity?id=absent", null)).isEqualTo(404);
        assertThat(send("DELETE", nodes.get(1), "/v0/entity?id=k0", null)).isEqualTo(202);
        assertThat(send("GET", nodes.get(2), "/v0/entities?start=k&end=l", null)).isEqualTo(200);
        assertThat(send("PUT", nodes.get(0), "/v0/entity?id=all&replicas=3/3", "v")).isEqualTo(201);
        assertThat(send("GET", nodes.get(1), "/v0/entity?id=all&replicas=3/3", null)).isEqualTo(200);

        cluster.stop(2);
        for (int i = 0; i < 5; i++) {
            assertThat(send("PUT", nodes.get(0), "/v0/entity?id=down" + i + "&replicas=3/3", "v")).isEqualTo(504);
            assertThat(send("GET", nodes.get(1), "/v0/entity?id=k" + (i + 1) + "&replicas=3/3", null)).isEqualTo(504);
            assertThat(send("DELETE", nodes.get(0), "/v0/entity?id=k" + (i + 1) + "&replicas=3/3", null)).isEqualTo(504);
            assertThat(send("PUT", nodes.get(1), "/v0/entity?id=up" + i, "v")).isEqualTo(201);
        }
        Thread.sleep(PrometheusServer.SCRAPE_INTERVAL.multipliedBy(3).toMillis());
        cluster.restart(2);
        assertThat(send("PUT", nodes.get(2), "/v0/entity?id=back&replicas=3/3", "v")).isEqualTo(201);
        // anti-entropy repair on demand: node 2 missed the writes above
        HttpRequest repair = HttpRequest.newBuilder(URI.create(nodes.get(2) + "/actuator/repair"))
                .timeout(Duration.ofSeconds(10)).header(InternalProtocol.SECRET_HEADER, cluster.secret())
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        assertThat(http.send(repair, HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(200);
    }

    private int send(String method, String node, String pathAndQuery, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(node + pathAndQuery))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** The values Grafana would offer for a {@code label_values([metric,] label)} variable. */
    private static List<String> variableValues(PrometheusServer server, GrafanaDashboard.Variable variable) throws Exception {
        Matcher matcher = LABEL_VALUES.matcher(variable.query().trim());
        assertThat(matcher.matches()).as("$" + variable.name() + " is label_values([metric,] label): " + variable.query())
                .isTrue();
        String label = matcher.group(2);
        String selector = matcher.group(1) != null ? matcher.group(1) : "{" + label + "!=\"\"}";
        List<String> values = new ArrayList<>();
        for (JsonNode series : server.query("count by (" + label + ") (" + selector + ")").values()) {
            values.add(series.path("metric").path(label).asString());
        }
        return values;
    }

    /** {@code text} as a regular expression that matches only itself, inside a PromQL string. */
    private static String regexLiteral(String text) {
        return text.replaceAll("([.\\\\+*?()|\\[\\]{}^$])", "\\\\\\\\$1");
    }
}
