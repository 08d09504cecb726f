package dev.dht.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Placement;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The membership and internal endpoints of a cluster's nodes, over HTTP, for tests of node processes: a node's view
 * ({@code GET /actuator/cluster}), waiting for a change and its cleanup to end, actuator {@code POST}s with the
 * cluster secret, and the records a node holds itself ({@code GET /internal/range}, which reads only the node's own
 * store, tombstones included).
 */
public final class ClusterAdmin {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String secret;

    /** @param secret the cluster secret, sent in {@link InternalProtocol#SECRET_HEADER} */
    public ClusterAdmin(String secret) {
        this.secret = secret;
    }

    /** {@code GET /actuator/cluster} of {@code node}: its view, {@code change} and {@code cleanupPending}. */
    public JsonNode view(URI node) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(node.resolve("/actuator/cluster"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET /actuator/cluster of %s: %s", node, response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    /** {@code GET /v0/status} of {@code node}, or -1 if it does not answer within 5 s. */
    public int status(URI node) {
        try {
            return HTTP.send(HttpRequest.newBuilder(node.resolve("/v0/status")).timeout(Duration.ofSeconds(5))
                    .GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Waits until {@code node}'s view has {@code members} members and no change in progress; returns that view. */
    public JsonNode awaitMembers(URI node, int members, Duration timeout) {
        return await().atMost(timeout).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() -> view(node),
                view -> view.get("members").size() == members && view.get("change").isNull());
    }

    /** Waits until {@code node}'s view has no change in progress; returns that view. */
    public JsonNode awaitNoChange(URI node, Duration timeout) {
        return await().atMost(timeout).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() -> view(node),
                view -> view.get("change").isNull());
    }

    /** Waits until every node of {@code nodes} holds the epoch of the first and has no cleanup pending. */
    public void awaitSettled(List<URI> nodes, Duration timeout) {
        await().atMost(timeout).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            long epoch = view(nodes.get(0)).get("epoch").asLong();
            for (URI node : nodes) {
                JsonNode view = view(node);
                assertThat(view.get("epoch").asLong()).as("epoch of %s", node).isEqualTo(epoch);
                assertThat(view.get("change").isNull()).as("change on %s: %s", node, view).isTrue();
                assertThat(view.get("cleanupPending").asBoolean()).as("cleanup pending on %s", node).isFalse();
            }
        });
    }

    /** {@code POST path} on {@code node}, no body, with the cluster secret (actuator write operations). */
    public HttpResponse<String> post(URI node, String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(node.resolve(path)).timeout(Duration.ofSeconds(30))
                .header(InternalProtocol.SECRET_HEADER, secret)
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code POST path} on {@code node} with the JSON body {@code json} and the cluster secret. */
    public HttpResponse<String> post(URI node, String path, String json) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(node.resolve(path)).timeout(Duration.ofSeconds(30))
                .header(InternalProtocol.SECRET_HEADER, secret).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The records {@code node} stores itself with ids in {@code [start, end)}, tombstones included, by id: its
     * {@code GET /internal/range}, which scans the node's own store only (no other replica is asked).
     */
    public Map<String, Record> localRecords(URI node, String start, String end)
            throws IOException, InterruptedException {
        URI range = node.resolve("/internal/range?start=" + V0Uri.percentEncode(start)
                + "&end=" + V0Uri.percentEncode(end));
        HttpResponse<byte[]> response = HTTP.send(HttpRequest.newBuilder(range).timeout(Duration.ofSeconds(60))
                .header(InternalProtocol.SECRET_HEADER, secret).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(response.statusCode()).as("GET /internal/range of %s", node).isEqualTo(200);
        Map<String, Record> records = new HashMap<>();
        for (KeyedRecord entry : RangeFrameCodec.decodeAll(response.body(), node.toString())) {
            records.put(new String(entry.key(), StandardCharsets.UTF_8), entry.record());
        }
        return records;
    }

    /** The placement of a view read from {@code GET /actuator/cluster} with no change in progress. */
    public static Placement placement(JsonNode view) {
        assertThat(view.get("change").isNull()).as("a view with no change in progress: %s", view).isTrue();
        List<Member> members = new ArrayList<>();
        for (JsonNode member : view.get("members")) {
            members.add(new Member(URI.create(member.get("node").asText()),
                    MemberState.valueOf(member.get("state").asText())));
        }
        return new Placement(new ClusterView(view.get("epoch").asLong(), view.get("replicationFactor").asInt(),
                members));
    }
}
