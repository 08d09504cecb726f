package dev.dht.web;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.http.BadRequestException;
import dev.dht.http.PayloadTooLargeException;
import dev.dht.peer.InternalProtocol;
import dev.dht.replication.ClusterTooSmallException;
import dev.dht.replication.QuorumNotReachedException;
import dev.dht.replication.RangeUnavailableException;
import io.netty.handler.timeout.ReadTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;

/**
 * The one place where failures become HTTP statuses, each with a one-line text body and never a stack trace:
 * <ul>
 *   <li>{@link BadRequestException}, malformed input, an unknown path (course clients expect it), a
 *       {@link ClusterTooSmallException} (a {@code from} the cluster shrank below while the request waited): 400</li>
 *   <li>{@link PayloadTooLargeException}: 413</li>
 *   <li>{@link AbortedException} (the client closed the connection before its body was complete): 400, not logged</li>
 *   <li>{@link ReadTimeoutException} (no body for {@code server.netty.idle-timeout}): 408, not logged</li>
 *   <li>{@link OverloadedException}, a {@link QuorumNotReachedException} whose failed replicas all refused
 *       ({@link QuorumNotReachedException#refusedOnly()}) and a {@link RejectedExecutionException}: 503 with
 *       {@code Retry-After: 1}, body "storage full: ..." for {@link OverloadReason#DISK_FULL}, "overloaded: ...,
 *       retry later" for {@link OverloadReason#BODY_MEMORY} (as admission control words its own 503s), "cluster membership
 *       changed during the request, retry" for {@link OverloadReason#STALE_EPOCH}, else
 *       "overloaded, retry later"; on {@code /internal/*} also the reason in
 *       {@link InternalProtocol#OVERLOAD_REASON_HEADER}</li>
 *   <li>a {@link QuorumNotReachedException} in which this node's own store failed with an error
 *       ({@link QuorumNotReachedException#localError()}: an I/O error, an {@link OutOfMemoryError}): 500, logged
 *       with that error's stack trace</li>
 *   <li>any other {@link QuorumNotReachedException}, and {@link RangeUnavailableException}: 504</li>
 *   <li>other {@link ResponseStatusException}s: their status; anything else: 500, logged with its stack trace</li>
 * </ul>
 * A failure after the response was committed (mid-stream) closes the connection without the terminating chunk.
 */
@Order(-2)
public final class ErrorResponseHandler implements WebExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ErrorResponseHandler.class);
    private static final String OVERLOADED = "overloaded, retry later";

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(failure);
        }
        HttpStatusCode status;
        String message;
        OverloadedException refusal = null;
        if (failure instanceof BadRequestException || failure instanceof ClusterTooSmallException) {
            status = HttpStatus.BAD_REQUEST;
            message = failure.getMessage();
        } else if (failure instanceof AbortedException) {
            status = HttpStatus.BAD_REQUEST;
            message = "connection closed before the request was complete";
        } else if (failure instanceof ReadTimeoutException) {
            status = HttpStatus.REQUEST_TIMEOUT;
            message = "request body not received in time";
        } else if (failure instanceof PayloadTooLargeException) {
            status = HttpStatus.CONTENT_TOO_LARGE;
            message = failure.getMessage();
        } else if (failure instanceof OverloadedException overloaded) {
            refusal = overloaded;
            status = HttpStatus.SERVICE_UNAVAILABLE;
            message = refusalMessage(overloaded);
        } else if (failure instanceof QuorumNotReachedException quorum && quorum.localError() != null) {
            log.error("{} {} failed: this node's store failed ({})", exchange.getRequest().getMethod(),
                    exchange.getRequest().getPath(), failure.getMessage(), quorum.localError());
            status = HttpStatus.INTERNAL_SERVER_ERROR;
            message = "internal error: this node's store failed";
        } else if (failure instanceof QuorumNotReachedException quorum && quorum.refusedOnly()) {
            refusal = quorum.firstRefusal();
            status = HttpStatus.SERVICE_UNAVAILABLE;
            message = refusalMessage(refusal);
        } else if (failure instanceof RejectedExecutionException) {
            status = HttpStatus.SERVICE_UNAVAILABLE;
            message = OVERLOADED;
        } else if (failure instanceof QuorumNotReachedException || failure instanceof RangeUnavailableException) {
            status = HttpStatus.GATEWAY_TIMEOUT;
            message = failure.getMessage();
        } else if (failure instanceof ResponseStatusException statusException) {
            status = statusException.getStatusCode();
            if (status.value() == HttpStatus.NOT_FOUND.value()) {
                status = HttpStatus.BAD_REQUEST;
                message = "unknown path " + exchange.getRequest().getPath().value();
            } else {
                message = statusException.getReason() != null ? statusException.getReason() : status.toString();
            }
        } else {
            log.error("{} {} failed", exchange.getRequest().getMethod(), exchange.getRequest().getPath(), failure);
            status = HttpStatus.INTERNAL_SERVER_ERROR;
            message = "internal error";
        }
        response.setStatusCode(status);
        if (status.value() == HttpStatus.SERVICE_UNAVAILABLE.value()) {
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
            if (refusal != null && exchange.getRequest().getPath().value().startsWith(InternalProtocol.PATH_PREFIX)) {
                response.getHeaders().set(InternalProtocol.OVERLOAD_REASON_HEADER, refusal.reason().token());
            }
        }
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        DataBuffer body = response.bufferFactory().wrap((oneLine(message) + "\n").getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(body));
    }

    /**
     * A full disk says so (its message names the reserve), a body short of memory says why as admission control's
     * 503s do, a node that is no member says whether it is joining or has left, a request refused as placed under
     * an older view after its retry says the membership changed; any other refusal is "overloaded, retry later".
     */
    private static String refusalMessage(OverloadedException refusal) {
        return switch (refusal.reason()) {
            case DISK_FULL, NOT_A_MEMBER -> refusal.getMessage();
            case BODY_MEMORY -> "overloaded: " + refusal.getMessage() + ", retry later";
            case STALE_EPOCH -> "cluster membership changed during the request, retry";
            default -> OVERLOADED;
        };
    }

    private static String oneLine(String message) {
        String text = message == null ? "error" : message.replace('\r', ' ').replace('\n', ' ');
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }
}
