package dev.dht.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The command line's client of one node's actuator, on the JDK's {@link HttpClient} (light to start). Turns every
 * failure into a {@link CliFailure} with the exit status of the command line: the host unreachable, too slow or
 * answering something else than JSON is {@link Dht#EXIT_UNREACHABLE}; 400, 403, 404 and 409 are
 * {@link Dht#EXIT_REFUSED} with the node's reason; other statuses {@link Dht#EXIT_UNREACHABLE}. Write operations
 * carry the cluster secret in {@code X-Dht-Cluster-Secret}. Blocking: each call waits for its answer on the calling
 * thread.
 */
public final class ActuatorClient {
    /** Longest wait for a connection. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /**
     * Longest wait for an answer, unless a call says otherwise: the node bounds its own work (a change's first step
     * within 30 s, a status's probes within 3 s), so this only ends the wait for a node that hangs.
     */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(120);
    private static final String SECRET_HEADER = "X-Dht-Cluster-Secret";
    static final JsonMapper JSON = JsonMapper.builder().build();

    private final URI base;
    private final Supplier<String> secret;
    private final HttpClient http;
    private final CliContext context;
    private String resolvedSecret;
    private boolean secretResolved;

    /**
     * @param base   the actuator's base URL (scheme, host, port), without {@code /actuator}
     * @param secret the secret given (null if none: a local cluster's is looked for)
     * @param ssl    the TLS context, or null for the JVM's default
     */
    ActuatorClient(URI base, Supplier<String> secret, SSLContext ssl, CliContext context) {
        this(base, secret, httpClient(ssl), context);
    }

    private ActuatorClient(URI base, Supplier<String> secret, HttpClient http, CliContext context) {
        this.base = base;
        this.secret = secret;
        this.http = http;
        this.context = context;
    }

    private static HttpClient httpClient(SSLContext ssl) {
        HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT);
        if (ssl != null) {
            builder.sslContext(ssl);
        }
        return builder.build();
    }

    /** A client of another node's actuator with the same secret and TLS settings. */
    ActuatorClient at(URI otherBase) {
        String known = secret();
        return new ActuatorClient(otherBase, () -> known, http, context);
    }

    /** The node asked. */
    public URI base() {
        return base;
    }

    /** An answer: its status and its JSON body (null if empty). */
    public record Answer(int status, JsonNode json) {
    }

    /** {@code GET /actuator/PATH}: the JSON of a 2xx answer. */
    public JsonNode get(String path) {
        return send("GET", path, null, false, ANSWER_TIMEOUT).json();
    }

    /** {@code POST /actuator/PATH} with the secret and {@code body} as JSON (null: none). */
    public Answer post(String path, Object body, Duration timeout) {
        return send("POST", path, body, true, timeout);
    }

    /** {@code DELETE /actuator/PATH} with the secret. */
    public Answer delete(String path) {
        return send("DELETE", path, null, true, ANSWER_TIMEOUT);
    }

    private Answer send(String method, String path, Object body, boolean write, Duration timeout) {
        URI uri = base.resolve("/actuator/" + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).header("Accept", "application/json");
        if (timeout != null) {
            request.timeout(timeout);
        }
        if (write) {
            String given = secret();
            if (given != null) {
                request.header(SECRET_HEADER, given);
            }
        }
        if (body != null) {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        } else if (write) {
            request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            throw new CliFailure(Dht.EXIT_UNREACHABLE, method + " " + uri + ": no answer in time (" + e.getMessage() + ")");
        } catch (IOException e) {
            throw new CliFailure(Dht.EXIT_UNREACHABLE, "cannot reach " + base + ": " + describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(Dht.EXIT_UNREACHABLE, "interrupted");
        }
        int status = response.statusCode();
        JsonNode json = parse(response.body());
        if (status >= 200 && status < 300) {
            if (json == null && !response.body().isBlank()) {
                throw new CliFailure(Dht.EXIT_UNREACHABLE, method + " " + uri + " answered " + status
                        + " with something else than JSON: is " + base + " a dht node's actuator?");
            }
            return new Answer(status, json);
        }
        String reason = json != null && json.hasNonNull("error") ? json.get("error").asString()
                : response.body().strip();
        if (status == 403) {
            throw new CliFailure(Dht.EXIT_REFUSED, "403 Forbidden from " + base + ": " + (secret() == null
                    ? "no cluster secret given (set DHT_CLUSTER_SECRET or --secret-file)"
                    : "the cluster secret is wrong") + (reason.isEmpty() ? "" : " (" + reason + ")"));
        }
        String message = status + " from " + uri + (reason.isEmpty() ? "" : ": " + reason);
        if (status == 400 || status == 404 || status == 409) {
            throw new CliFailure(Dht.EXIT_REFUSED, message);
        }
        throw new CliFailure(Dht.EXIT_UNREACHABLE, message);
    }

    /** The secret given, else a local cluster's found through the node's view, else null; looked up once. */
    String secret() {
        if (!secretResolved) {
            secretResolved = true;
            resolvedSecret = secret.get();
            if (resolvedSecret == null) {
                resolvedSecret = LocalClusterSecret.find(members(), context.workingDir()).orElse(null);
            }
        }
        return resolvedSecret;
    }

    /** The members of the node's view; empty if it cannot be read. */
    private List<URI> members() {
        List<URI> members = new ArrayList<>();
        members.add(base);
        try {
            JsonNode view = send("GET", "cluster", null, false, ANSWER_TIMEOUT).json();
            view.path("members").forEach(member -> members.add(URI.create(member.path("node").asString())));
        } catch (CliFailure | IllegalArgumentException unreadable) {
            // the write then goes without a secret and its 403 says how to give one
        }
        return members;
    }

    private static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            return JSON.readTree(body);
        } catch (JacksonException notJson) {
            return null;
        }
    }

    /** The first message in {@code e}'s causes, else the innermost exception's kind (a refused connection has none). */
    private static String describe(IOException e) {
        Throwable innermost = e;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t.getMessage();
            }
            innermost = t;
        }
        return innermost instanceof java.net.ConnectException ? "connection refused" : innermost.getClass().getName();
    }
}
