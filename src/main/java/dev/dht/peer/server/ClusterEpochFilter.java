package dev.dht.peer.server;

import dev.dht.failure.OverloadReason;
import dev.dht.peer.InternalProtocol;
import java.net.URI;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Keeps a node's cluster view at least as new as that of any node that sends it an internal request: a request
 * whose {@link InternalProtocol#EPOCH_HEADER} is above this node's epoch waits until this node has fetched and
 * adopted the sender's view ({@link InternalProtocol#SENDER_HEADER}); then it is served. Every answer carries this
 * node's epoch, so a sender that is behind learns it; a sender that is behind and no member of this node's view (a node
 * decommissioned a moment ago, or removed while it was down), or one at this node's epoch that is no member and sends
 * a record read, write or range (a request it admitted just before it took the view that left it out), gets 503 with
 * {@link InternalProtocol#OVERLOAD_REASON_HEADER} {@code not-a-member} instead of being served, so the request it coordinates fails as that node's own refusal (503 to
 * its client, as once it has taken the view), not as a replica failure (504). A sender ahead of this node is judged
 * so once this node took its view. Whether a member's record call is stale for its key is
 * {@code dev.dht.cluster.EpochFence}'s to say, in the replica's record handler. A failed fetch fails the request (the sender retries, or
 * treats it as a failed replica call). Never blocks: the fetch is asynchronous.
 */
public final class ClusterEpochFilter implements HandlerFilterFunction<ServerResponse, ServerResponse> {
    private final LongSupplier epoch;
    private final BiFunction<URI, Long, Mono<Void>> catchUp;
    private final Predicate<URI> isMember;

    /**
     * @param epoch    this node's current epoch
     * @param catchUp  fetches and adopts the view of the node at the URI, up to at least the epoch given
     * @param isMember whether a node is a member of this node's current view
     */
    public ClusterEpochFilter(LongSupplier epoch, BiFunction<URI, Long, Mono<Void>> catchUp, Predicate<URI> isMember) {
        this.epoch = epoch;
        this.catchUp = catchUp;
        this.isMember = isMember;
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        long theirs = parse(request.headers().firstHeader(InternalProtocol.EPOCH_HEADER));
        String sender = request.headers().firstHeader(InternalProtocol.SENDER_HEADER);
        Mono<ServerResponse> serve = Mono.defer(() -> {
            request.exchange().getResponse().getHeaders().set(InternalProtocol.EPOCH_HEADER,
                    Long.toString(epoch.getAsLong()));
            return next.handle(request);
        });
        if (sender == null || isViewRequest(request)) {
            return serve;
        }
        URI from;
        try {
            from = URI.create(sender);
        } catch (IllegalArgumentException e) {
            return serve;
        }
        long ours = epoch.getAsLong();
        if (ours > 0 && (theirs < ours || theirs == ours && isRecordRequest(request)) && !isMember.test(from)) {
            // behind: a node removed while it was down, back with its old view, learns of its removal from this
            // answer; level: it took the view in which it is no member while it coordinated a request planned under
            // the older one (its client check passed before), which must not count a replica here
            return notAMember(from, ours);
        }
        if (theirs <= ours) {
            return serve;
        }
        // ahead: this node takes the sender's view first; record traffic from a node that is no member of it is
        // refused then as it would be at once
        boolean record = isRecordRequest(request);
        return catchUp.apply(from, theirs).then(Mono.defer(() -> {
            long now = epoch.getAsLong();
            return record && now > 0 && !isMember.test(from) ? notAMember(from, now) : serve;
        }));
    }

    private static Mono<ServerResponse> notAMember(URI from, long ours) {
        return ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE).contentType(MediaType.TEXT_PLAIN)
                .header(InternalProtocol.EPOCH_HEADER, Long.toString(ours))
                .header(InternalProtocol.OVERLOAD_REASON_HEADER, OverloadReason.NOT_A_MEMBER.token())
                .bodyValue(from + " is no member of the cluster at epoch " + ours + "\n");
    }

    /**
     * Requests of the reads, writes and ranges a coordinator sends for its clients (and hint replay): a node that is
     * no member of the view serves no client, so it sends none of these at the current epoch but for a request it
     * admitted before it took that view. Other internal requests (a leaving node driving its own decommission sends
     * cleanup requests at the final epoch, in which it is no member) are not refused for that.
     */
    private static boolean isRecordRequest(ServerRequest request) {
        String path = request.path();
        return path.equals(InternalProtocol.RECORD_PATH) || path.equals(InternalProtocol.RECORDS_PATH)
                || path.equals(InternalProtocol.READS_PATH) || path.equals(InternalProtocol.RANGE_PATH);
    }

    /** Requests that carry or ask for views themselves need no catching up first. */
    private static boolean isViewRequest(ServerRequest request) {
        return request.path().startsWith(InternalProtocol.VIEW_PATH);
    }

    private static long parse(String header) {
        if (header == null) {
            return 0;
        }
        try {
            return Long.parseLong(header);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
