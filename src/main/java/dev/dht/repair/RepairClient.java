package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import java.time.Duration;
import java.util.Base64;
import java.util.BitSet;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClientRequest;

/**
 * The calling side of the internal repair endpoints ({@link InternalProtocol}), with the shared replica
 * {@link WebClient} and the cluster secret. A peer builds its tree by scanning its whole store at its
 * {@code dht.repair.scan-rate}, which may take longer than {@code dht.replica-timeout}, so repair calls switch
 * the client's response timeout off and allow {@link #TREE_TIMEOUT} for a tree; a record stream has no timeout after its first record (it is paced by
 * the repair, as a client paces a range). Non-blocking.
 */
public final class RepairClient {
    /**
     * Longest wait for a peer's tree: the peer's scan is paced by its {@code dht.repair.scan-rate}, so this bounds
     * the store a tree can cover (72 million records at the default 20 000/s).
     */
    static final Duration TREE_TIMEOUT = Duration.ofHours(1);
    private static final int BODY_PREFETCH = 4;
    private final WebClient client;
    private final String secret;
    private final Node self;

    /** @param self this node, named to the peer as the other side of the pair */
    public RepairClient(WebClient client, String secret, Node self) {
        this.client = client;
        this.secret = secret;
        this.self = self;
    }

    /** {@code peer}'s tree of the records it shares with this node. */
    public Mono<MerkleTree> tree(Node peer) {
        return client.get()
                .uri(peer.url() + InternalProtocol.REPAIR_TREE_PATH + "?peer={self}", self.url())
                .header(InternalProtocol.SECRET_HEADER, secret)
                .httpRequest(request -> request.<HttpClientRequest>getNativeRequest().responseTimeout(null))
                .retrieve()
                .bodyToMono(byte[].class)
                .map(MerkleTree::fromBytes)
                .timeout(TREE_TIMEOUT);
    }

    /** {@code peer}'s records shared with this node in {@code segments}, in key order. */
    public Flux<KeyedRecord> records(Node peer, BitSet segments) {
        String encoded = Base64.getUrlEncoder().withoutPadding().encodeToString(segments.toByteArray());
        return client.get()
                .uri(peer.url() + InternalProtocol.REPAIR_RECORDS_PATH + "?peer={self}&segments={segments}", self.url(), encoded)
                .header(InternalProtocol.SECRET_HEADER, secret)
                .httpRequest(request -> request.<HttpClientRequest>getNativeRequest().responseTimeout(null))
                .exchangeToFlux(response -> response.statusCode().is2xxSuccessful()
                        ? RangeFrameCodec.decode(response.bodyToFlux(DataBuffer.class), peer.name(), BODY_PREFETCH)
                        : response.<KeyedRecord>createError().flux());
    }
}
