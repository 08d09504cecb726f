package dev.dht.admission;

import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ClientRequestMetrics;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.DecoderResultProvider;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * Admission control of one HTTP/1.1 connection, in the Netty pipeline between the HTTP codec and Reactor Netty's
 * request handling: asks {@link BodyMemory} for room for the declared body (Content-Length) and
 * {@link AdmissionControl} for a slot for every client request ({@code /v0/*} but {@code /v0/status}), and
 * answers a refused one itself, 503 with {@code Retry-After: 1} and a one-line text body, so that neither Reactor
 * Netty nor WebFlux builds anything for it and its body is never buffered (counted in {@code dht.client.requests}
 * with status 503). A chunked body is counted as its parts arrive; the part that finds no room ends the body
 * there, marked {@link RefusedBody} (its reader fails it: 503, nothing stored), and the rest is dropped.
 *
 * <p>It also times every client request ({@code /v0/entity}, {@code /v0/entities}, {@code /v0/status}; the
 * {@code operation} tag of {@link ClientRequestMetrics#operationOf}) in {@code dht.client.requests}: from when its
 * head is read here to when the head of its answer (status line and headers, not a {@code 100 Continue}) is
 * written, in ns, tagged with that answer's status; a refusal from when its head is read to when its 503 is
 * written. A request whose head failed to decode (Reactor Netty answers 400 and closes) is not timed, nor one
 * whose connection closes before its answer's head is written. Answers on a connection come in the order of its
 * requests, so the answer being written belongs to the oldest pending request.
 *
 * <p>The connection stays usable: a refused request's body is read and dropped, and answers keep the order of the
 * requests. It closes after the 503 to a request that asked to close it or expected {@code 100 Continue}, and
 * after a malformed body (an admitted request's body is marked {@link MalformedBody} and answered 400). An
 * admitted request holds its in-flight slot and its body's bytes until the last part of its answer is written or
 * the connection closes; that time is its queueing delay for {@link AdmissionControl#release(long)}. Why and the
 * corner cases: docs/operations.md, "AdmissionHandler".
 *
 * <p>One instance per connection (not sharable); runs on the connection's event loop and never blocks.
 */
public final class AdmissionHandler extends ChannelDuplexHandler {
    /**
     * Pending answer of a request handed on to Reactor Netty without a slot and not timed (internal, actuator,
     * malformed).
     */
    private static final Object NOT_LIMITED = new Object();
    private static final String STATUS_PATH = "/v0/status";

    private final AdmissionControl control;
    private final BodyMemory memory;
    private final ClientRequestMetrics metrics;
    /**
     * The requests read on this connection whose answers are not written yet, oldest first: {@link #NOT_LIMITED},
     * a {@link TimedRequest} (a status check), an {@link AdmittedRequest}, or a {@link Refusal} waiting to be sent.
     */
    private final ArrayDeque<Object> pending = new ArrayDeque<>();
    /** Whether the rest of a refused request's body is still to be read and dropped. */
    private boolean droppingBody;
    /** Whether a refusal closes this connection: nothing more is read into the pipeline. */
    private boolean closing;
    /** Whether this handler took in what it read, so nothing downstream will ask to read more. */
    private boolean consumedInput;
    /** Whether the connection closes once the answer being served is written (its request's body was malformed). */
    private boolean closeAfterAnswer;
    /** Whether the answer being written is an informational one (100 Continue), which precedes the real one. */
    private boolean informational;
    /** The admitted request whose chunked body is arriving, counted part by part; null if none. */
    private AdmittedRequest receiving;

    /**
     * @param control the node's admission control
     * @param memory  the node's request-body bytes in flight
     * @param metrics where client requests are timed
     */
    public AdmissionHandler(AdmissionControl control, BodyMemory memory, ClientRequestMetrics metrics) {
        this.control = control;
        this.memory = memory;
        this.metrics = metrics;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (closing || (droppingBody && !(msg instanceof HttpRequest))) {
            if (msg instanceof LastHttpContent) {
                droppingBody = false;
            }
            if (msg instanceof DecoderResultProvider part && part.decoderResult().isFailure()) {
                // after a framing error the codec decodes nothing more on this connection (Reactor Netty closes it too)
                closing = true;
                ctx.close();
            }
            ReferenceCountUtil.release(msg);
            consumedInput = true;
            return;
        }
        if (msg instanceof HttpContent part && !(msg instanceof HttpRequest)) {
            if (part.decoderResult().isFailure()) {
                failBody(ctx, part);
                return;
            }
            if (receiving != null && !countPart(ctx, part)) {
                return;
            }
        }
        if (msg instanceof HttpRequest request) {
            RequestFraming.check(request);
            receiving = null;
            String uri = request.uri();
            int pathStart = pathStart(uri);
            if (!isClientRequest(uri, pathStart) || request.decoderResult().isFailure()) {
                pending.add(NOT_LIMITED);
            } else {
                long readNanos = System.nanoTime();
                int pathEnd = pathEnd(uri, pathStart);
                String operation = ClientRequestMetrics.operationOf(request.method().name(), uri, pathStart, pathEnd);
                if (isStatusCheck(uri, pathStart, pathEnd)) {
                    pending.add(new TimedRequest(operation, readNanos));
                } else if (!admit(ctx, request, operation, readNanos)) {
                    return;
                }
            }
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * Reserves the request's declared body and a slot, or refuses it (false). A declared body larger than
     * {@link BodyMemory#maxBodyBytes()} is not reserved: it is answered 413 without being read. A chunked body is
     * counted as it arrives ({@link #countPart}).
     *
     * @param operation its {@code operation} tag ({@link ClientRequestMetrics#operationOf}), null if not timed
     * @param readNanos {@link System#nanoTime()} when its head was read
     */
    private boolean admit(ChannelHandlerContext ctx, HttpRequest request, String operation, long readNanos) {
        long declared = HttpUtil.getContentLength(request, 0L);
        long reserved = declared <= memory.maxBodyBytes() ? declared : 0;
        OverloadedException refusal = memory.reserve(reserved);
        if (refusal == null) {
            refusal = control.admit();
            if (refusal != null) {
                memory.release(reserved);
            }
        }
        if (refusal != null) {
            refuse(ctx, request, refusal, operation, readNanos);
            return false;
        }
        AdmittedRequest admitted = new AdmittedRequest(operation, readNanos, control.now(), request.headers(), reserved);
        pending.add(admitted);
        boolean bodyToCount = HttpUtil.isTransferEncodingChunked(request) && !(request instanceof LastHttpContent);
        receiving = bodyToCount ? admitted : null;
        return true;
    }

    /**
     * Counts a part of the chunked body being received, up to {@link BodyMemory#maxBodyBytes()} for the request
     * (the reader refuses a larger body with 413). If {@link BodyMemory} has no room for it, the body ends here
     * instead: the request is marked {@link RefusedBody}, an empty last part is handed on in place of this one
     * (false), and the rest of the body is dropped. A request already answered counts nothing more.
     */
    private boolean countPart(ChannelHandlerContext ctx, HttpContent part) {
        AdmittedRequest admitted = receiving;
        if (part instanceof LastHttpContent) {
            receiving = null;
        }
        long bytes = Math.min(part.content().readableBytes(), memory.maxBodyBytes() - admitted.reservedBytes());
        if (admitted.isReleased() || bytes <= 0) {
            return true;
        }
        OverloadedException refusal = memory.reserve(bytes);
        if (refusal == null) {
            admitted.reserved(bytes);
            return true;
        }
        RefusedBody.mark(ctx.channel(), admitted.headers(), refusal);
        receiving = null;
        droppingBody = !(part instanceof LastHttpContent);
        ReferenceCountUtil.release(part);
        ctx.fireChannelRead(LastHttpContent.EMPTY_LAST_CONTENT);
        return false;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (consumedInput) {
            consumedInput = false;
            if (!closing && !ctx.channel().config().isAutoRead()) {
                ctx.read();
            }
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse response) {
            informational = response.status().codeClass() == HttpStatusClass.INFORMATIONAL;
            if (!informational) {
                if (closeAfterAnswer) {
                    HttpUtil.setKeepAlive(response, false);
                }
                answered(response);
            }
        }
        boolean lastOfAnswer = msg instanceof LastHttpContent && !informational;
        if (lastOfAnswer && closeAfterAnswer) {
            ctx.write(msg, promise.unvoid()).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.write(msg, promise);
        }
        if (lastOfAnswer && !pending.isEmpty()) {
            if (pending.poll() instanceof AdmittedRequest admitted) {
                release(ctx, admitted);
            }
            while (pending.peek() instanceof Refusal refusal) {
                pending.poll();
                send(ctx, refusal);
            }
        }
    }

    /**
     * Times the oldest pending request, whose answer's head {@code response} is (answers keep the order of the
     * requests), if it is a timed one not counted yet.
     */
    private void answered(HttpResponse response) {
        if (pending.peek() instanceof TimedRequest timed) {
            String operation = timed.answered();
            if (operation != null) {
                metrics.record(operation, response.status().code(), System.nanoTime() - timed.readNanos());
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releasePending(ctx);
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releasePending(ctx);
    }

    /**
     * A body part the codec could not decode (bad chunk framing) of a request handed on to Reactor Netty: its body
     * ends here, marked {@link MalformedBody} so that its reader fails it (400) before anything is stored, and the
     * connection closes after the answer (the codec decodes nothing more on it). If the request's answer is already
     * written, or earlier answers are still pending (its handler has not even started), it closes at once.
     */
    private void failBody(ChannelHandlerContext ctx, HttpContent part) {
        String cause = String.valueOf(part.decoderResult().cause().getMessage());
        ReferenceCountUtil.release(part);
        closing = true;
        consumedInput = true;
        if (pending.size() == 1) {
            closeAfterAnswer = true;
            MalformedBody.mark(ctx.channel(), cause);
            ctx.fireChannelRead(LastHttpContent.EMPTY_LAST_CONTENT);
        } else {
            ctx.close();
        }
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, OverloadedException refusal, String operation,
                        long readNanos) {
        boolean keepAlive = HttpUtil.isKeepAlive(request) && !HttpUtil.is100ContinueExpected(request);
        droppingBody = !(request instanceof LastHttpContent);
        closing = !keepAlive;
        consumedInput = true;
        ReferenceCountUtil.release(request);

        byte[] body = ("overloaded: " + refusal.getMessage() + ", retry later\n").getBytes(StandardCharsets.US_ASCII);
        FullHttpResponse response = new DefaultFullHttpResponse(request.protocolVersion(),
                HttpResponseStatus.SERVICE_UNAVAILABLE, Unpooled.wrappedBuffer(body));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.RETRY_AFTER, "1");
        HttpUtil.setKeepAlive(response, keepAlive);
        Refusal answer = new Refusal(response, operation, readNanos);
        if (pending.isEmpty()) {
            send(ctx, answer);
        } else {
            pending.add(answer);
        }
    }

    private void send(ChannelHandlerContext ctx, Refusal refusal) {
        if (refusal.operation() != null) {
            long nanos = System.nanoTime() - refusal.readNanos();
            metrics.record(refusal.operation(), HttpResponseStatus.SERVICE_UNAVAILABLE.code(), nanos);
        }
        ChannelFuture written = ctx.writeAndFlush(refusal.response());
        if (!HttpUtil.isKeepAlive(refusal.response())) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void releasePending(ChannelHandlerContext ctx) {
        for (Object answer = pending.poll(); answer != null; answer = pending.poll()) {
            if (answer instanceof AdmittedRequest admitted) {
                release(ctx, admitted);
            } else if (answer instanceof Refusal refusal) {
                refusal.response().release();
            }
        }
    }

    /** Gives back an admitted request's slot and body bytes: it has ended, answered or not. */
    private void release(ChannelHandlerContext ctx, AdmittedRequest admitted) {
        control.release(admitted.admittedNanos());
        memory.release(admitted.release());
        RefusedBody.clear(ctx.channel(), admitted.headers());
    }

    /** Whether a request target is a client request of the v0 API, in origin form or absolute form. */
    private static boolean isClientRequest(String uri, int pathStart) {
        return pathStart >= 0 && uri.startsWith("/v0/", pathStart);
    }

    /** Whether the path {@code uri[pathStart, pathEnd)} is {@code /v0/status}, which is never refused for load. */
    private static boolean isStatusCheck(String uri, int pathStart, int pathEnd) {
        return pathEnd - pathStart == STATUS_PATH.length() && uri.startsWith(STATUS_PATH, pathStart);
    }

    /**
     * Where the path of a request target starts: 0 in origin form, after the authority in absolute form; -1 if it
     * has none (absolute form without a path, whose path is {@code /}, or an asterisk).
     */
    private static int pathStart(String uri) {
        if (uri.startsWith("/")) {
            return 0;
        }
        int scheme = uri.indexOf("://");
        return scheme < 0 ? -1 : uri.indexOf('/', scheme + 3);
    }

    /** Where the path that starts at {@code pathStart} (not -1) ends: at its query's {@code ?} or the end. */
    private static int pathEnd(String uri, int pathStart) {
        int query = uri.indexOf('?', pathStart);
        return query < 0 ? uri.length() : query;
    }

    /**
     * A 503 of ours waiting for the answers to earlier requests on the connection; {@code readNanos} is when its
     * request's head was read.
     */
    private record Refusal(FullHttpResponse response, String operation, long readNanos) {
    }
}
