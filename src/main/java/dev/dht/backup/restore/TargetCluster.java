package dev.dht.backup.restore;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerEndpoint;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The cluster a backup is restored into: its view read once from {@code GET /internal/cluster/view}, and writes of
 * record batches to each key's replicas under that view ({@link Placement#newReplicasAtMost}; the record's own
 * replica count, at least the target's replication factor, capped at its size: {@link #placed}) through the internal write path ({@code POST /internal/records},
 * {@code PUT /internal/record} for a record too large for a batch) with the cluster secret, so records keep their
 * timestamps and the replicas' last-write-wins keeps whichever version is newer. A call that fails is retried with
 * backoff ({@value #ATTEMPTS} attempts); a batch succeeds when every record was acknowledged by a majority of its
 * replicas. Memory: the batch given, and per replica one call's encoded body at a time (a batch's calls to a replica
 * go one after the other). Asynchronous (the JDK's HttpClient); thread-safe.
 */
final class TargetCluster {
    static final int ATTEMPTS = 6;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http;
    private final String secret;
    private final Placement placement;
    private final int replicationFactor;

    TargetCluster(HttpClient http, String secret, Placement placement) {
        this.http = http;
        this.secret = secret;
        this.placement = placement;
        this.replicationFactor = Math.min(Record.MAX_FROM, placement.view().replicationFactor());
    }

    /**
     * Reads the view of the first of {@code nodes} that answers: {@code GET /internal/cluster/view} with the cluster
     * secret, the internal protocol on the API port (the one port a restore needs: the records go there too, also
     * where the actuator has a management port of its own); a node named by its management port answers that path
     * as unknown (400 {@code unknown path ...}, 404 from another server), and {@code GET /actuator/cluster} is read
     * there instead.
     *
     * @throws RestoreException if none answers ({@link RestoreException.Kind#UNREACHABLE}; 403: the secret is not the
     *                          cluster's), or a membership change is in progress there ({@link RestoreException.Kind#REFUSED})
     */
    static TargetCluster connect(HttpClient http, String secret, List<URI> nodes) throws InterruptedException {
        List<String> failures = new ArrayList<>();
        for (URI node : nodes) {
            try {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(node.resolve(InternalProtocol.VIEW_PATH))
                        .header(InternalProtocol.SECRET_HEADER, secret)
                        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return new TargetCluster(http, secret, new Placement(checked(node, ClusterViewFile.decode(response.body()))));
                }
                if (unknownPath(response)) {
                    response = http.send(HttpRequest.newBuilder(node.resolve("/actuator/cluster"))
                            .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() == 200) {
                        return new TargetCluster(http, secret, new Placement(checked(node, fromJson(response.body()))));
                    }
                }
                failures.add(node + ": " + response.statusCode()
                        + (response.statusCode() == 403 ? " (not the cluster's secret)" : ""));
            } catch (IOException | RuntimeException e) {
                if (e instanceof RestoreException refused) {
                    throw refused;
                }
                failures.add(node + ": " + e);
            }
        }
        throw new RestoreException(RestoreException.Kind.UNREACHABLE, "cannot read the target cluster's view (GET "
                + InternalProtocol.VIEW_PATH + " or /actuator/cluster): " + failures);
    }

    /**
     * Whether {@code response} says its server does not serve the path: a node's management port answers a path
     * outside the actuator as every unknown path, 400 {@code unknown path PATH} (ErrorResponseHandler); 404 as other
     * servers do.
     */
    private static boolean unknownPath(HttpResponse<String> response) {
        return response.statusCode() == 404
                || response.statusCode() == 400 && response.body() != null && response.body().startsWith("unknown path");
    }

    private static ClusterView checked(URI node, ClusterView view) {
        if (view.change() != null) {
            throw new RestoreException(RestoreException.Kind.REFUSED, "the target cluster is changing its membership ("
                    + node + " says " + view.change() + "): restore once it completed");
        }
        return view;
    }

    /** The view in {@code GET /actuator/cluster}'s document; a change in progress as a non-null change. */
    private static ClusterView fromJson(String body) {
        JsonNode view = JSON.readTree(body);
        if (!view.path("change").isNull() && !view.path("change").isMissingNode()) {
            throw new RestoreException(RestoreException.Kind.REFUSED,
                    "the target cluster is changing its membership (change " + view.get("change")
                            + "): restore once it completed");
        }
        List<Member> members = new ArrayList<>();
        for (JsonNode member : view.get("members")) {
            members.add(new Member(URI.create(member.get("node").asString()),
                    MemberState.valueOf(member.get("state").asString())));
        }
        return new ClusterView(view.get("epoch").asLong(), view.get("replicationFactor").asInt(), members);
    }

    /** The target's placement. */
    Placement placement() {
        return placement;
    }

    /**
     * Writes {@code batch} to each record's replicas; completes once every record was acknowledged by a majority of
     * its replicas, or fails with {@link RestoreException} naming the replicas that did not acknowledge.
     */
    CompletableFuture<Void> write(List<KeyedRecord> batch) {
        Map<Node, List<KeyedRecord>> byReplica = new LinkedHashMap<>();
        Map<KeyedRecord, List<Node>> replicasOf = new HashMap<>();
        for (KeyedRecord original : batch) {
            KeyedRecord entry = placed(original);
            List<Node> replicas = placement.newReplicasAtMost(entry.key(), entry.record().from());
            replicasOf.put(entry, replicas);
            for (Node replica : replicas) {
                byReplica.computeIfAbsent(replica, node -> new ArrayList<>()).add(entry);
            }
        }
        Map<Node, CompletableFuture<String>> calls = new LinkedHashMap<>();
        byReplica.forEach((node, entries) -> calls.put(node, send(node, entries)));
        return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new)).thenRun(() -> {
            Map<Node, String> failed = new LinkedHashMap<>();
            calls.forEach((node, call) -> {
                String error = call.join();
                if (error != null) {
                    failed.put(node, error);
                }
            });
            if (failed.isEmpty()) {
                return;
            }
            for (Map.Entry<KeyedRecord, List<Node>> entry : replicasOf.entrySet()) {
                List<Node> replicas = entry.getValue();
                long acked = replicas.stream().filter(node -> !failed.containsKey(node)).count();
                if (acked < replicas.size() / 2 + 1) {
                    throw new RestoreException("key " + new String(entry.getKey().key(), StandardCharsets.UTF_8)
                            + ": " + acked + " of " + replicas.size() + " replicas acknowledged, "
                            + (replicas.size() / 2 + 1) + " needed; failed: " + failed);
                }
            }
        });
    }

    /**
     * {@code entry} with its replica count raised to the target's replication factor if it was lower (both capped at
     * the target's size): a record written at {@code 1/1} is restored to as many replicas as one written with the
     * default, so that reads at the target's majority see it and repair keeps its copies alike. The same version
     * otherwise (timestamp, value, expiry); at equal timestamps the larger replica count wins last-write-wins, so it
     * also replaces the original's copy in a restore into the same cluster, with the same value.
     */
    KeyedRecord placed(KeyedRecord entry) {
        Record record = entry.record();
        int from = Math.max(placement.placedFrom(record.from()), placement.placedFrom(replicationFactor));
        if (from == record.from()) {
            return entry;
        }
        Record raised = record.isTombstone()
                ? Record.tombstone(record.timestamp(), from)
                : Record.value(record.timestamp(), record.value(), from, record.expiresAtMillis());
        return new KeyedRecord(entry.key(), raised);
    }

    /**
     * {@code entries} to {@code node} in batches under the batch limit, one call after the other; null once all
     * applied, else the error. Each call's body is encoded only when it is sent, so a node holds one encoded body
     * at a time.
     */
    private CompletableFuture<String> send(Node node, List<KeyedRecord> entries) {
        List<List<KeyedRecord>> calls = new ArrayList<>();
        List<KeyedRecord> chunk = new ArrayList<>();
        int bytes = 4;
        for (KeyedRecord entry : entries) {
            int frame = RangeFrameCodec.frameBytes(entry);
            if (frame + 4 > InternalProtocol.BATCH_MAX_BYTES) {
                calls.add(List.of(entry));
                continue;
            }
            if (bytes + frame > InternalProtocol.BATCH_MAX_BYTES) {
                calls.add(chunk);
                chunk = new ArrayList<>();
                bytes = 4;
            }
            chunk.add(entry);
            bytes += frame;
        }
        if (!chunk.isEmpty()) {
            calls.add(chunk);
        }
        CompletableFuture<String> all = CompletableFuture.completedFuture(null);
        for (List<KeyedRecord> call : calls) {
            all = all.thenCompose(error -> error != null ? CompletableFuture.completedFuture(error)
                    : attempt(request(node, call), 1));
        }
        return all;
    }

    /** The call that writes {@code entries}: {@code PUT /internal/record} for one too large for a batch. */
    private HttpRequest request(Node node, List<KeyedRecord> entries) {
        KeyedRecord first = entries.get(0);
        if (entries.size() == 1 && RangeFrameCodec.frameBytes(first) + 4 > InternalProtocol.BATCH_MAX_BYTES) {
            URI uri = PeerEndpoint.WRITE.uri(node, new String(first.key(), StandardCharsets.UTF_8));
            return request(uri, "PUT", first.record().encode());
        }
        return request(PeerEndpoint.WRITE_BATCH.uri(node), "POST", RangeFrameCodec.encodeBatch(entries));
    }

    private HttpRequest request(URI uri, String method, byte[] body) {
        return HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(30))
                .header(InternalProtocol.SECRET_HEADER, secret)
                .header("Content-Type", "application/octet-stream")
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
    }

    /** One call, retried with backoff on 5xx and I/O errors; null when applied, else why not. */
    private CompletableFuture<String> attempt(HttpRequest request, int attempt) {
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .handle((response, error) -> {
                    if (error == null && response.statusCode() / 100 == 2) {
                        return null;
                    }
                    return error != null ? error.toString()
                            : response.statusCode() + " " + response.body().strip();
                })
                .thenCompose(error -> {
                    boolean retriable = error != null && !error.startsWith("4");
                    if (!retriable || attempt >= ATTEMPTS) {
                        return CompletableFuture.completedFuture(error == null ? null
                                : request.method() + " " + request.uri() + ": " + error);
                    }
                    long delayMs = Math.min(5_000, 200L << (attempt - 1));
                    return CompletableFuture.supplyAsync(() -> null,
                                    CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS))
                            .thenCompose(ignored -> attempt(request, attempt + 1));
                });
    }
}
