package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * One connection in an embedded channel: an {@link AdmissionHandler}, then a recorder of what it hands on (what
 * Reactor Netty would get). Tests send request heads and body parts in and answers out, as Netty's codec and
 * Reactor Netty would.
 */
final class AdmissionConnection {
    final List<Object> handedOn = new ArrayList<>();
    final EmbeddedChannel channel;
    private final Predicate<HttpRequest> bodyless;

    /** @param bodyless requests that {@link #send(Object)} follows with their empty last part */
    AdmissionConnection(AdmissionHandler handler, Predicate<HttpRequest> bodyless) {
        this.bodyless = bodyless;
        this.channel = new EmbeddedChannel(handler, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                handedOn.add(msg);
            }
        });
    }

    /** Sends a request head (a bodyless one with its empty last part) or a part of a body. */
    void send(Object message) {
        channel.writeInbound(message);
        if (message instanceof HttpRequest request && bodyless.test(request)) {
            channel.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
        }
    }

    /** Sends a request head and then {@code lastContent}. */
    void send(Object request, Object lastContent) {
        channel.writeInbound(request);
        channel.writeInbound(lastContent);
    }

    /** The first request handed on. */
    HttpRequest request() {
        return (HttpRequest) handedOn.get(0);
    }

    /** Writes an answer as Reactor Netty does: head, then the last (empty) part. */
    void writeAnswer(HttpResponseStatus status) {
        channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, status), LastHttpContent.EMPTY_LAST_CONTENT);
    }

    /** The next full answer the handler wrote itself. */
    FullHttpResponse answer() {
        Object written = channel.readOutbound();
        assertThat(written).isInstanceOf(FullHttpResponse.class);
        return (FullHttpResponse) written;
    }
}
