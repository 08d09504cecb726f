package dev.dht.backup.restore;

/** A restore that cannot go on: the message says why (the command prints it and exits 1). */
public final class RestoreException extends RuntimeException {

    /** A failure described by {@code message}. */
    public RestoreException(String message) {
        super(message);
    }
}
