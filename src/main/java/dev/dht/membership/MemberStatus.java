package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Member;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.cluster.Placement;
import dev.dht.membership.raft.LogRole;
import dev.dht.membership.raft.ViewLog;
import dev.dht.peer.NodeStats;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The rows of {@code GET /actuator/cluster/status} (the operator's {@code dht status}): for each member of the view,
 * {@code up} as this node sees it, {@code records} and {@code bytes} on its disk, {@code ownership} (the share of the
 * key space it replicates), {@code hints} held for it across the members that answered, and {@code role} in the view
 * log ({@code leader}, {@code voter}, {@code listener}, or null when it holds no place in this node's Raft
 * configuration).
 *
 * <p>Every other member is asked for its {@link NodeStats} at once; that call is also the probe of its health: a
 * member that does not answer within {@link #PROBE_TIMEOUT} is reported to {@link PeerHealth} as failed and shown
 * down with null figures, so an idle cluster (no requests, hence no failed exchanges) shows a dead member down within
 * the timeout; one that answers is reported up. Non-blocking: the answer comes once every member answered or timed
 * out.
 */
public final class MemberStatus {
    /** Longest wait for a member's figures; a member slower than this is shown down. */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);
    /** Keys sampled for {@code ownership}: its error is about 1/sqrt of this (1.6 %). */
    static final int OWNERSHIP_SAMPLE = 4096;
    private final URI self;
    private final ViewLog viewLog;
    private final PeerHealth health;
    private final Supplier<PeerClient> peers;
    private final Supplier<Mono<NodeStats>> local;

    /**
     * @param self    this node's base URL
     * @param peers   the client of the other members (a supplier: the client is made after the membership beans)
     * @param local   this node's own figures ({@link LocalNodeStats#current})
     */
    public MemberStatus(URI self, ViewLog viewLog, PeerHealth health, Supplier<PeerClient> peers,
                        Supplier<Mono<NodeStats>> local) {
        this.self = self;
        this.viewLog = viewLog;
        this.health = health;
        this.peers = peers;
        this.local = local;
    }

    /** One map per member of {@code view}, in the view's order, with {@code node} and {@code state} first. */
    public Mono<List<Map<String, Object>>> rows(ClusterView view) {
        List<Member> members = view.members();
        return Flux.fromIterable(members)
                .flatMapSequential(member -> statsOf(member.node()), Math.max(1, members.size()))
                .collectList()
                .map(stats -> {
                    Map<String, Long> hints = new LinkedHashMap<>();
                    stats.forEach(answer -> answer.ifPresent(s -> s.hints()
                            .forEach((peer, count) -> hints.merge(peer, count, Long::sum))));
                    Map<URI, Double> ownership = ownership(view);
                    List<Map<String, Object>> rows = new ArrayList<>();
                    for (int i = 0; i < members.size(); i++) {
                        Member member = members.get(i);
                        Optional<NodeStats> answer = stats.get(i);
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("node", member.node().toString());
                        row.put("state", member.state().name());
                        row.put("up", answer.isPresent());
                        row.put("records", answer.map(NodeStats::records).orElse(null));
                        row.put("bytes", answer.map(NodeStats::bytes).orElse(null));
                        row.put("ownership", ownership.get(member.node()));
                        row.put("hints", hints.getOrDefault(member.node().toString(), 0L));
                        row.put("role", role(member.node()));
                        rows.add(row);
                    }
                    return rows;
                });
    }

    /** The figures of {@code node}, empty if it did not answer in time (it is then reported down). */
    private Mono<Optional<NodeStats>> statsOf(URI node) {
        if (node.equals(self)) {
            return local.get().map(Optional::of).defaultIfEmpty(Optional.empty());
        }
        Node peer = new Node(node, false);
        return peers.get().stats(peer)
                .timeout(PROBE_TIMEOUT)
                .doOnNext(answer -> health.succeeded(peer))
                .map(Optional::of)
                .onErrorResume(error -> {
                    health.failed(peer, error);
                    return Mono.just(Optional.empty());
                });
    }

    private String role(URI node) {
        return viewLog.role(node).map(LogRole::token).orElse(null);
    }

    /**
     * The share of the key space each member replicates (in the old or the new replica set while a change runs), as
     * a fraction of {@link #OWNERSHIP_SAMPLE} keys placed with the view's replication factor: rendezvous hashing has no
     * ranges to add up, so it is estimated by placing the sample.
     */
    static Map<URI, Double> ownership(ClusterView view) {
        Placement placement = new Placement(view);
        int from = placement.placedFrom(view.replicationFactor());
        Map<URI, Integer> counts = new LinkedHashMap<>();
        view.members().forEach(member -> counts.put(member.node(), 0));
        for (int k = 0; k < OWNERSHIP_SAMPLE; k++) {
            byte[] key = ("ownership-sample-" + k).getBytes(StandardCharsets.UTF_8);
            for (Member member : view.members()) {
                if (placement.replicates(member.node(), key, from)) {
                    counts.merge(member.node(), 1, Integer::sum);
                }
            }
        }
        Map<URI, Double> shares = new LinkedHashMap<>();
        counts.forEach((node, count) -> shares.put(node, Math.round(count * 1000.0 / OWNERSHIP_SAMPLE) / 1000.0));
        return shares;
    }
}
