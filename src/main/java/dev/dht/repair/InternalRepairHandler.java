package dev.dht.repair;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.http.BadRequestException;
import dev.dht.http.QueryParameters;
import dev.dht.peer.PeerEndpoint;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.server.PeerEndpointHandler;
import java.net.URI;
import java.util.Base64;
import java.util.BitSet;
import java.util.Map;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The serving side of anti-entropy repair, {@code /internal/repair/tree} and {@code /internal/repair/records}
 * (see {@link dev.dht.peer.InternalProtocol}): this node's hash tree and records of chosen segments,
 * over the records it shares with the calling peer. Routed by {@link dev.dht.peer.server.PeerRoutes} behind the
 * guards of every internal route. The scans run on the storage scheduler ({@link RepairScan}), never on the event
 * loop; 400 for an unknown peer or malformed segments, 503 if the
 * storage queue is full.
 */
public final class InternalRepairHandler implements PeerEndpointHandler {
    private final RepairScan scan;
    private final Membership membership;

    /** @param membership the cluster, of which the {@code peer} parameter must name another member */
    public InternalRepairHandler(RepairScan scan, Membership membership) {
        this.scan = scan;
        this.membership = membership;
    }

    /** {@link PeerEndpoint#REPAIR_TREE}, {@link PeerEndpoint#REPAIR_RECORDS}. */
    @Override
    public Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers() {
        return Map.of(PeerEndpoint.REPAIR_TREE, this::tree,
                PeerEndpoint.REPAIR_RECORDS, this::records);
    }

    /** 200 with {@link MerkleTree#toBytes()} of the records shared with {@code peer}. */
    public Mono<ServerResponse> tree(ServerRequest request) {
        Node peer = peer(request);
        return scan.tree(peer).flatMap(tree -> ServerResponse.ok()
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .bodyValue(tree.toBytes()));
    }

    /** 200, streaming the shared records of the requested segments as range frames, with backpressure. */
    public Mono<ServerResponse> records(ServerRequest request) {
        Node peer = peer(request);
        BitSet segments = segments(QueryParameters.required(request, "segments"));
        return ServerResponse.ok()
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .body(BodyInserters.fromDataBuffers(RangeFrameCodec.encode(scan.records(peer, segments),
                        DefaultDataBufferFactory.sharedInstance)));
    }

    private Node peer(ServerRequest request) {
        String url = QueryParameters.required(request, "peer");
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("peer " + url + " is not a URL");
        }
        for (Node node : membership.placement().members()) {
            if (!node.self() && node.url().equals(uri)) {
                return node;
            }
        }
        throw new BadRequestException("peer " + url + " is not another member of the cluster");
    }

    private static BitSet segments(String text) {
        try {
            BitSet segments = BitSet.valueOf(Base64.getUrlDecoder().decode(text));
            if (segments.length() > MerkleTree.SEGMENTS) {
                throw new BadRequestException("segments: at most " + MerkleTree.SEGMENTS + " bits, got " + segments.length());
            }
            return segments;
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("segments: not base64url: " + e.getMessage());
        }
    }
}
