package dev.dht;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A training run for the JVM's start-up caches: the class data sharing archive of JDK 17
 * ({@code -XX:ArchiveClassesAtExit}, which {@code ./mvnw package} and the container image make) and JDK 25's
 * ahead-of-time cache ({@code -XX:AOTCacheOutput}). Started with {@code -D}{@value #PROPERTY}{@code =true}, a node
 * starts as usual (on an empty data dir: a one-node cluster, its view log formed), then sends itself
 * {@value #ROUNDS} rounds of what clients and operators send (a PUT, GETs at 1/1 and by default, a range, a DELETE,
 * a GET of the deleted key, a request refused as bad input, the status and the metrics), checks each answer's status
 * and exits: 0 when every answer was the expected one, 1 otherwise, naming the first that was not. So the archive or
 * cache holds the classes of a whole start (the web server, the Raft view log, its gRPC transport) and of the request
 * path, where a training that exits once the context is built ({@code spring.context.exit=onRefresh}) holds about
 * half of them (docs/performance.md, "Start-up and warm-up").
 *
 * <p>Runs on the main thread after the application has started; the requests block it (never an event loop).
 */
public final class TrainingRun {
    /** The JVM system property that makes a start a training run. */
    public static final String PROPERTY = "dht.training-run";
    /** Rounds of requests: enough for every request path's classes, short enough for a build step (about 1 s). */
    static final int ROUNDS = 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private TrainingRun() {
    }

    /** True if this JVM was started as a training run ({@code -Ddht.training-run=true}). */
    public static boolean requested() {
        return Boolean.getBoolean(PROPERTY);
    }

    /**
     * Sends the training requests to the started node of {@code context}, closes the context and returns the exit
     * status (0: every answer as expected). Blocks.
     */
    public static int run(ConfigurableApplicationContext context) {
        Environment environment = context.getEnvironment();
        String api = "http://127.0.0.1:" + environment.getRequiredProperty("local.server.port");
        String management = "http://127.0.0.1:"
                + environment.getProperty("local.management.port", environment.getRequiredProperty("local.server.port"));
        WebClient client = WebClient.create();
        List<String> wrong = new ArrayList<>();
        for (int round = 0; round < ROUNDS && wrong.isEmpty(); round++) {
            String entity = api + "/v0/entity?id=training-" + round;
            expect(client, HttpMethod.PUT, entity, "value " + round, 201, wrong);
            expect(client, HttpMethod.GET, entity, null, 200, wrong);
            expect(client, HttpMethod.GET, entity + "&replicas=1/1", null, 200, wrong);
            expect(client, HttpMethod.GET, api + "/v0/entities?start=training-&end=training-~", null, 200, wrong);
            expect(client, HttpMethod.DELETE, entity, null, 202, wrong);
            expect(client, HttpMethod.GET, entity, null, 404, wrong);
            expect(client, HttpMethod.GET, api + "/v0/entity?id=", null, 400, wrong);
            expect(client, HttpMethod.GET, api + "/v0/status", null, 200, wrong);
            expect(client, HttpMethod.GET, management + "/actuator/prometheus", null, 200, wrong);
        }
        int status = wrong.isEmpty() ? 0 : 1;
        if (!wrong.isEmpty()) {
            System.err.println("training run: " + wrong.get(0));
        }
        return SpringApplication.exit(context, () -> status);
    }

    private static void expect(WebClient client, HttpMethod method, String url, String body, int expected,
                               List<String> wrong) {
        WebClient.RequestBodySpec request = client.method(method).uri(URI.create(url));
        if (body != null) {
            request.bodyValue(body.getBytes(StandardCharsets.UTF_8));
        }
        Integer status;
        try {
            status = request.exchangeToMono(response -> response.releaseBody()
                            .thenReturn(response.statusCode().value()))
                    .block(TIMEOUT);
        } catch (RuntimeException e) {
            wrong.add(method + " " + url + " failed: " + e.getMessage());
            return;
        }
        if (status == null || status != expected) {
            wrong.add(method + " " + url + " answered " + status + ", expected " + expected);
        }
    }
}
