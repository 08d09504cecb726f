package dev.dht.testing;

import dev.dht.cluster.ClusterViewFile;
import dev.dht.peer.InternalProtocol;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Fault injection on the serving side of one node (a WebFilter, first in the chain): delays the handling of
 * every replica request ({@code /internal/*}) this node receives, so that the caller's connection stays busy
 * until the answer comes, as with a slow peer. Unlike {@link ReplicaFaults#delayAnswersFrom}, which delays an
 * answer after it arrived, this holds the caller's pooled connection for the whole delay. Registered as a bean
 * in a node's context by {@link InProcessCluster}; client requests ({@code /v0/*}) are not affected.
 */
public final class ServerFaults implements WebFilter, Ordered {
    private final AtomicReference<Duration> replicaRequestDelay = new AtomicReference<>();
    private volatile boolean recordRequestsOnly;
    private volatile boolean stallRanges;
    private volatile boolean holdMembershipStreams;
    private volatile boolean refuseRecordWrites;
    /** The epoch of the proposed views held unanswered, or 0: none. */
    private volatile long heldViewEpoch;

    /** Delays the handling of every replica request this node receives by {@code delay}. */
    public void delayReplicaRequests(Duration delay) {
        recordRequestsOnly = false;
        replicaRequestDelay.set(delay);
    }

    /**
     * Delays the handling of the record reads and writes this node receives ({@code /internal/record},
     * {@code /internal/records}, {@code /internal/records/read}) by {@code delay}; the membership's own calls (view
     * checks and proposals) are answered at once, so they do not hold the caller's pooled connection.
     */
    public void delayRecordRequests(Duration delay) {
        recordRequestsOnly = true;
        replicaRequestDelay.set(delay);
    }

    /**
     * Makes every range stream this node serves to a peer ({@code /internal/range}) stall after its first 256 KiB:
     * nothing more is sent and the connection stays open, as with a peer frozen or cut off by a partition
     * mid-stream.
     */
    public void stallRangeStreams() {
        stallRanges = true;
    }

    /**
     * Holds every membership stream this node serves ({@code /internal/cluster/stream}) unanswered until
     * {@link #clear()}: a change stays in its streaming phase.
     */
    public void holdMembershipStreams() {
        holdMembershipStreams = true;
    }

    /**
     * Holds every proposal of a view of {@code epoch} this node receives ({@code POST /internal/cluster/view}, the
     * view in the body; not a joiner's request to append, which has {@code expect}) unanswered until
     * {@link #clear()}: the change stays in the phase of that view, as its coordinator waits for every member to take
     * it before the next one.
     */
    public void holdViewProposals(long epoch) {
        heldViewEpoch = epoch;
    }

    /**
     * Answers every record write this node receives from a peer or a restore ({@code PUT /internal/record},
     * {@code POST /internal/records}) with 503 until {@link #clear()}, at once, as a node that refuses under overload.
     */
    public void refuseRecordWrites() {
        refuseRecordWrites = true;
    }

    /** Removes all faults. */
    public void clear() {
        replicaRequestDelay.set(null);
        stallRanges = false;
        holdMembershipStreams = false;
        heldViewEpoch = 0;
        refuseRecordWrites = false;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String path = exchange.getRequest().getPath().value();
        if (refuseRecordWrites && (path.equals(InternalProtocol.RECORD_PATH) || path.equals(InternalProtocol.RECORDS_PATH))
                && exchange.getRequest().getMethod() != HttpMethod.GET) {
            exchange.getResponse().setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
            return exchange.getResponse().setComplete();
        }
        if (stallRanges && exchange.getRequest().getPath().value().startsWith("/internal/range")) {
            return chain.filter(exchange.mutate().response(new StallingResponse(exchange.getResponse())).build());
        }
        if (heldViewEpoch != 0 && exchange.getRequest().getMethod() == HttpMethod.POST
                && exchange.getRequest().getPath().value().equals(InternalProtocol.VIEW_PATH)
                && !exchange.getRequest().getQueryParams().containsKey("expect")) {
            return holdingViews(exchange, chain);
        }
        if (holdMembershipStreams && exchange.getRequest().getPath().value().startsWith("/internal/cluster/stream")) {
            return Flux.interval(Duration.ofMillis(50)).filter(tick -> !holdMembershipStreams).next()
                    .then(chain.filter(exchange));
        }
        Duration delay = replicaRequestDelay.get();
        if (delay == null || !path.startsWith("/internal/") || recordRequestsOnly && !(path.equals(InternalProtocol.RECORD_PATH)
                || path.equals(InternalProtocol.RECORDS_PATH) || path.equals(InternalProtocol.READS_PATH))) {
            return chain.filter(exchange);
        }
        return Mono.delay(delay).then(chain.filter(exchange));
    }

    /** Reads the proposed view; holds it while its epoch is {@link #heldViewEpoch}, then hands the body on. */
    private Mono<Void> holdingViews(ServerWebExchange exchange, WebFilterChain chain) {
        return DataBufferUtils.join(exchange.getRequest().getBody()).flatMap(buffer -> {
            byte[] body = new byte[buffer.readableByteCount()];
            buffer.read(body);
            DataBufferUtils.release(buffer);
            long epoch = ClusterViewFile.decode(new String(body, StandardCharsets.UTF_8)).epoch();
            ServerHttpRequest replay = new ServerHttpRequestDecorator(exchange.getRequest()) {
                @Override
                public Flux<DataBuffer> getBody() {
                    return Flux.just(exchange.getResponse().bufferFactory().wrap(body));
                }
            };
            Mono<Void> handled = chain.filter(exchange.mutate().request(replay).build());
            return epoch != heldViewEpoch ? handled : Flux.interval(Duration.ofMillis(50))
                    .filter(tick -> heldViewEpoch != epoch).next().then(handled);
        });
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /** A response whose body stops after {@link #STALL_AFTER_BYTES}, without ending. */
    private static final class StallingResponse extends ServerHttpResponseDecorator {
        /** Bytes sent before the stall: a few records of up to 64 KiB, so the first arrives in time. */
        static final long STALL_AFTER_BYTES = 256 * 1024;

        StallingResponse(ServerHttpResponse delegate) {
            super(delegate);
        }

        @Override
        public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
            AtomicLong sent = new AtomicLong();
            return super.writeWith(Flux.<DataBuffer>from(body)
                    .takeUntil(buffer -> sent.addAndGet(buffer.readableByteCount()) >= STALL_AFTER_BYTES)
                    .concatWith(Flux.never()));
        }

        @Override
        public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            return writeWith(Flux.from(body).concatMap(Flux::from));
        }
    }
}
