package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.http.BadRequestException;
import dev.dht.http.QueryParameters;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerEndpoint;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.StreamPart;
import dev.dht.peer.server.PeerEndpointHandler;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The serving side of membership: {@code /internal/cluster/view} (read, propose) and {@code /internal/cluster/stream}
 * (the records a node gains; a pull of them), see {@link dev.dht.peer.PeerEndpoint}. A refused proposal or stream is
 * 409 with one line; a malformed view or parameter is 400. Views are stored on the bounded-elastic scheduler and
 * records scanned on the storage threads; never blocks an event loop. Routed by
 * {@link dev.dht.peer.server.PeerRoutes} behind the guards of every internal route.
 */
public final class InternalClusterHandler implements PeerEndpointHandler {
    private final Membership membership;
    private final ViewExchange exchange;
    private final RecordStreaming streaming;
    private final OwnershipCleanup cleanup;
    private final ChangeProcedure procedure;

    /** The handler over this node's view ({@code membership}), its view exchange, record streaming and cleanup. */
    public InternalClusterHandler(Membership membership, ViewExchange exchange, RecordStreaming streaming,
                                  OwnershipCleanup cleanup, ChangeProcedure procedure) {
        this.membership = membership;
        this.exchange = exchange;
        this.procedure = procedure;
        this.streaming = streaming;
        this.cleanup = cleanup;
    }

    /** {@link PeerEndpoint#VIEW}, {@link PeerEndpoint#PROPOSE_VIEW}, {@link PeerEndpoint#STREAM}, {@link PeerEndpoint#PULL}, {@link PeerEndpoint#CLEANUP}. */
    @Override
    public Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers() {
        return Map.of(PeerEndpoint.VIEW, this::view,
                PeerEndpoint.PROPOSE_VIEW, this::propose,
                PeerEndpoint.STREAM, this::stream,
                PeerEndpoint.PULL, this::pull,
                PeerEndpoint.CLEANUP, this::cleanup);
    }

    /** 200 with this node's view, and whether its cleanup is pending. */
    public Mono<ServerResponse> view(ServerRequest request) {
        return text(HttpStatus.OK, ClusterViewFile.encode(membership.view()));
    }

    /**
     * Takes a proposed view: 200 with the view held afterwards, 409 if refused, 400 if malformed. With
     * {@code expect}, a change's first view from a node that holds no log yet (a joiner): appended to the view log
     * if its view is at that epoch.
     */
    public Mono<ServerResponse> propose(ServerRequest request) {
        Long expect = request.queryParam("expect").map(InternalClusterHandler::epoch).orElse(null);
        return request.bodyToMono(String.class)
                .switchIfEmpty(Mono.error(() -> new BadRequestException("a cluster view is required")))
                .map(InternalClusterHandler::decode)
                .flatMap(view -> expect == null ? exchange.accept(view) : procedure.append(expect, view))
                .flatMap(view -> text(HttpStatus.OK, ClusterViewFile.encode(view)))
                .onErrorResume(ChangeRefusedException.class, refused -> text(HttpStatus.CONFLICT, refused.getMessage()));
    }

    /** 200 streaming the records {@code peer} gains from this node as range frames; 409 without a change. */
    public Mono<ServerResponse> stream(ServerRequest request) {
        Node peer = new Node(url(QueryParameters.required(request, "peer")), false);
        long epoch = epoch(QueryParameters.required(request, "epoch"));
        byte[] after = request.queryParam("after").map(key -> key.getBytes(StandardCharsets.UTF_8)).orElse(null);
        StreamPart part;
        try {
            part = StreamPart.of(request.queryParam("part").orElse(null));
        } catch (IllegalArgumentException unknown) {
            throw new BadRequestException(unknown.getMessage());
        }
        try {
            return ServerResponse.ok()
                    .contentType(MediaType.APPLICATION_OCTET_STREAM)
                    .body(BodyInserters.fromDataBuffers(RangeFrameCodec.encode(streaming.outgoing(peer, epoch, after, part),
                            DefaultDataBufferFactory.sharedInstance)));
        } catch (ChangeRefusedException refused) {
            return text(HttpStatus.CONFLICT, refused.getMessage());
        }
    }

    /** Pulls what this node gains: 200 once stored, 409 without a change. */
    public Mono<ServerResponse> pull(ServerRequest request) {
        long epoch = epoch(QueryParameters.required(request, "epoch"));
        Set<URI> lost = QueryParameters.optional(request, "lost").stream()
                .flatMap(text -> Arrays.stream(text.split(",")))
                .filter(node -> !node.isBlank())
                .map(URI::create)
                .collect(Collectors.toUnmodifiableSet());
        return streaming.pullAll(epoch, lost)
                .then(text(HttpStatus.OK, "pulled"))
                .onErrorResume(ChangeRefusedException.class, refused -> text(HttpStatus.CONFLICT, refused.getMessage()));
    }

    /** Starts this node's cleanup after the change that ended at {@code epoch}: 200. */
    public Mono<ServerResponse> cleanup(ServerRequest request) {
        cleanup.startAfter(epoch(QueryParameters.required(request, "epoch")));
        return text(HttpStatus.OK, "cleanup " + (cleanup.isPending() ? "running" : "done"));
    }

    private Mono<ServerResponse> text(HttpStatus status, String body) {
        return ServerResponse.status(status)
                .contentType(MediaType.TEXT_PLAIN)
                .header(InternalProtocol.CLEANUP_PENDING_HEADER, Boolean.toString(cleanup.isPending()))
                .bodyValue(body.endsWith("\n") ? body : body + "\n");
    }

    private static ClusterView decode(String text) {
        try {
            return ClusterViewFile.decode(text);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("malformed cluster view: " + e.getMessage());
        }
    }

    private static long epoch(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new BadRequestException("epoch: not a number: " + text);
        }
    }

    private static URI url(String text) {
        try {
            return Optional.of(URI.create(text)).filter(uri -> uri.getHost() != null)
                    .orElseThrow(() -> new BadRequestException("peer " + text + " is not a URL"));
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("peer " + text + " is not a URL");
        }
    }
}
