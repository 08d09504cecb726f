package dev.dht.web;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLHandshakeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts and logs failed TLS handshakes of one side of the node's connections: Counter
 * {@code dht.tls.handshake.failures} (tags {@code side}: server for connections to this node, client for this
 * node's calls to peers; {@code reason}: {@code not_tls} (plain HTTP or garbage to a TLS port), {@code certificate}
 * (expired, from another CA, a wrong host name, none where one is needed), {@code closed} (the other end hung up
 * in the handshake), {@code timeout}, {@code other}). Logs a warning with the remote address and the cause, at most
 * one a second (with the number left out since), so garbage from a scanner cannot flood the log.
 *
 * <p>One instance, shared by every connection of its side ({@link ChannelHandler.Sharable}), sits right after
 * Netty's {@code SslHandler} and leaves the pipeline once the handshake is over. Never blocks.
 */
@ChannelHandler.Sharable
public final class TlsHandshakeFailures extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(TlsHandshakeFailures.class);
    private static final long LOG_INTERVAL_NANOS = 1_000_000_000L;
    private static final int MAX_CAUSE_LENGTH = 200;

    private final String side;
    private final MeterRegistry registry;
    private final AtomicLong lastLoggedNanos = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final AtomicLong unlogged = new AtomicLong();

    /** The counter of {@code side} ({@code server} or {@code client}) in {@code registry}. */
    public TlsHandshakeFailures(String side, MeterRegistry registry) {
        this.side = side;
        this.registry = registry;
        counter("other");
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent completion) {
            if (!completion.isSuccess()) {
                failed(ctx, completion.cause());
            }
            ctx.pipeline().remove(this);
        }
        super.userEventTriggered(ctx, event);
    }

    private void failed(ChannelHandlerContext ctx, Throwable cause) {
        String reason = reason(cause);
        counter(reason).increment();
        long now = System.nanoTime();
        long last = lastLoggedNanos.get();
        if (now - last >= LOG_INTERVAL_NANOS && lastLoggedNanos.compareAndSet(last, now)) {
            long skipped = unlogged.getAndSet(0);
            LOG.warn("TLS handshake ({}) with {} failed, {}: {}{}", side, ctx.channel().remoteAddress(), reason,
                    shortened(String.valueOf(cause)),
                    skipped > 0 ? " (" + skipped + " more failures since the last such line)" : "");
        } else {
            unlogged.incrementAndGet();
        }
    }

    private Counter counter(String reason) {
        return Counter.builder("dht.tls.handshake.failures")
                .description("TLS handshakes that failed, by side and reason")
                .tag("side", side)
                .tag("reason", reason)
                .register(registry);
    }

    /** The reason tag of a handshake failure's {@code cause}. */
    static String reason(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof NotSslRecordException) {
                return "not_tls";
            }
            if (t instanceof SslHandshakeTimeoutException) {
                return "timeout";
            }
            if (t instanceof CertificateException || t instanceof CertPathValidatorException) {
                return "certificate";
            }
            if (t instanceof SSLHandshakeException && t.getMessage() != null
                    && t.getMessage().toLowerCase(Locale.ROOT).contains("certificate")) {
                return "certificate";
            }
            if (t instanceof ClosedChannelException) {
                return "closed";
            }
        }
        return "other";
    }

    private static String shortened(String text) {
        return text.length() <= MAX_CAUSE_LENGTH ? text : text.substring(0, MAX_CAUSE_LENGTH) + "...";
    }
}
