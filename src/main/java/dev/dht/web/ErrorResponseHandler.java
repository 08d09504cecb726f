package dev.dht.web;

import dev.dht.replication.QuorumNotReachedException;
import dev.dht.replication.RangeUnavailableException;
import dev.dht.storage.StorageFullException;
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
 *   <li>{@link BadRequestException}, malformed input, and an unknown path: 400 (course clients expect 400 for
 *       unknown paths)</li>
 *   <li>{@link PayloadTooLargeException}: 413</li>
 *   <li>{@link AbortedException} (the client closed the connection before its body was complete, so the answer
 *       cannot get out): 400, not logged</li>
 *   <li>{@link ReadTimeoutException} (a client stopped sending its body for {@code server.netty.idle-timeout};
 *       Reactor Netty closes the connection, so the answer rarely gets out): 408, not logged</li>
 *   <li>{@link RejectedExecutionException} (storage queue full), also a {@link QuorumNotReachedException} whose
 *       failed replicas all refused for that reason: 503 with {@code Retry-After: 1}; so is a
 *       {@link StorageFullException} (a write below {@code dht.storage.min-free-space}), whose message says so</li>
 *   <li>any other {@link QuorumNotReachedException}, and {@link RangeUnavailableException}: 504</li>
 *   <li>other {@link ResponseStatusException}s: their status; anything else: 500, logged with its stack trace</li>
 * </ul>
 * A failure after the response was committed (mid-stream) cannot change the status: the connection is then
 * closed without the terminating chunk, so the client sees an incomplete body.
 */
@Order(-2)
public final class ErrorResponseHandler implements WebExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ErrorResponseHandler.class);

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(failure);
        }
        HttpStatusCode status;
        String message;
        if (failure instanceof BadRequestException) {
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
        } else if (isOverload(failure)) {
            status = HttpStatus.SERVICE_UNAVAILABLE;
            String storageFull = storageFullMessage(failure);
            message = storageFull != null ? storageFull : "overloaded, retry later";
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
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
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        DataBuffer body = response.bufferFactory().wrap((oneLine(message) + "\n").getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(body));
    }

    private static boolean isOverload(Throwable failure) {
        if (failure instanceof QuorumNotReachedException quorum) {
            return quorum.causedByOverload();
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RejectedExecutionException) {
                return true;
            }
        }
        return false;
    }

    private static String storageFullMessage(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof StorageFullException) {
                return t.getMessage();
            }
        }
        return null;
    }

    private static String oneLine(String message) {
        String text = message == null ? "error" : message.replace('\r', ' ').replace('\n', ' ');
        return text.length() > 300 ? text.substring(0, 300) + "..." : text;
    }
}
