package dev.dht.peer;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolNegotiator;
import io.netty.handler.ssl.SslContext;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSessionContext;

/**
 * The peer client's TLS context, swapped whole when its certificates are reloaded: each new connection's
 * {@link SSLEngine} comes from the context of the moment, so a rotated client certificate or CA applies to the next
 * handshake, without a restart and without disturbing connections already open. Reactor Netty's client takes one
 * {@link SslContext} for its lifetime; this is that one. Never blocks.
 */
public final class ReloadableSslContext extends SslContext {
    private volatile SslContext current;

    /** Starts with {@code initial}, a client context. */
    public ReloadableSslContext(SslContext initial) {
        this.current = checkClient(initial);
    }

    /** Makes {@code next} (a client context) the one new connections use; open connections keep theirs. */
    public void update(SslContext next) {
        this.current = checkClient(next);
    }

    private static SslContext checkClient(SslContext context) {
        Objects.requireNonNull(context, "context");
        if (!context.isClient()) {
            throw new IllegalArgumentException("the peer client needs a client context");
        }
        return context;
    }

    @Override
    public boolean isClient() {
        return true;
    }

    @Override
    public List<String> cipherSuites() {
        return current.cipherSuites();
    }

    @Override
    @SuppressWarnings("deprecation")
    public ApplicationProtocolNegotiator applicationProtocolNegotiator() {
        return current.applicationProtocolNegotiator();
    }

    @Override
    public SSLEngine newEngine(ByteBufAllocator alloc) {
        return current.newEngine(alloc);
    }

    @Override
    public SSLEngine newEngine(ByteBufAllocator alloc, String peerHost, int peerPort) {
        return current.newEngine(alloc, peerHost, peerPort);
    }

    @Override
    public SSLSessionContext sessionContext() {
        return current.sessionContext();
    }
}
