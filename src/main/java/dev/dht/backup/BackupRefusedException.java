package dev.dht.backup;

/**
 * A backup that cannot start or a backup that cannot be deleted now: no location configured, one already running
 * on this node, this node no member. The actuator answers 409 with the message; the internal endpoint 409 too.
 */
public final class BackupRefusedException extends RuntimeException {

    /** A refusal saying why. */
    public BackupRefusedException(String message) {
        super(message);
    }
}
