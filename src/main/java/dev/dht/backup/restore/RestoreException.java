package dev.dht.backup.restore;

/**
 * A restore that cannot go on: the message says why, {@link #kind()} which exit status the command gives it (see
 * {@link RestoreCommand}).
 */
public final class RestoreException extends RuntimeException {
    /** Why a restore stopped, as the command line's exit statuses tell them apart. */
    public enum Kind {
        /** The backup cannot be restored as it is, or the restore could not finish: exit 3. */
        FAILED,
        /** No node of the target cluster answered: exit 1. */
        UNREACHABLE,
        /** The target cluster or the arguments refuse the restore now (a membership change runs): exit 2. */
        REFUSED
    }

    private final Kind kind;

    /** A failure of the restore itself ({@link Kind#FAILED}) described by {@code message}. */
    public RestoreException(String message) {
        this(Kind.FAILED, message);
    }

    /** A stop of kind {@code kind} described by {@code message}. */
    public RestoreException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** Why the restore stopped. */
    public Kind kind() {
        return kind;
    }
}
