package dev.dht.http;

/** Client input that cannot be served (missing id, malformed replicas, ...). Answered as 400; nothing is changed. */
public final class BadRequestException extends RuntimeException {
    public BadRequestException(String message) {
        super(message, null, false, false);
    }
}
