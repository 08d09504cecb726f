package dev.dht.peer.server;

import dev.dht.peer.InternalProtocol;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Refuses internal requests of another cluster: a request whose {@link InternalProtocol#CLUSTER_ID_HEADER} names
 * another cluster id than this node's view gets 403 (as a wrong cluster secret does: the sender is not let in, and a
 * retry cannot change that), before any view is fetched from the sender or a record touched. A node that once belonged
 * to another cluster at the same URL (a cluster formed anew on emptied disks, a data dir copied from elsewhere) so
 * neither reads nor writes here nor brings its views in. A request without the header passes: a node of the version
 * before cluster ids (a rolling restart onto this one), or a node on an empty disk asking the seeds at its start;
 * so does every request to a founding member that has not agreed on its new cluster's id yet. Every answer carries
 * this node's id. Never blocks.
 */
public final class ClusterIdFilter implements HandlerFilterFunction<ServerResponse, ServerResponse> {
    private final Supplier<Optional<UUID>> cluster;

    /** @param cluster this node's cluster id (its current view's); empty: none yet, every request passes */
    public ClusterIdFilter(Supplier<Optional<UUID>> cluster) {
        this.cluster = cluster;
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        UUID ours = cluster.get().orElse(null);
        if (ours == null) {
            return next.handle(request);
        }
        request.exchange().getResponse().getHeaders().set(InternalProtocol.CLUSTER_ID_HEADER, ours.toString());
        String theirs = request.headers().firstHeader(InternalProtocol.CLUSTER_ID_HEADER);
        if (theirs == null || theirs.equals(ours.toString())) {
            return next.handle(request);
        }
        String sender = request.headers().firstHeader(InternalProtocol.SENDER_HEADER);
        return ServerResponse.status(HttpStatus.FORBIDDEN).contentType(MediaType.TEXT_PLAIN)
                .bodyValue((sender == null ? "the sender" : sender) + " is of cluster " + theirs + ", this node of "
                        + ours + "\n");
    }
}
