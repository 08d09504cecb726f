package dev.dht.http;

/** A request body larger than {@code dht.max-value-size}. Answered as 413; nothing is stored. */
public final class PayloadTooLargeException extends RuntimeException {
    public PayloadTooLargeException(long limitBytes) {
        super("value larger than the limit of " + limitBytes + " bytes (dht.max-value-size)", null, false, false);
    }
}
