package dev.dht.replication;

/**
 * Fewer than {@code ack} replicas succeeded, either because too many failed for {@code ack} to be reachable
 * or because the replica timeout passed. Answered as 504 Gateway Timeout, except when every failure was a
 * replica refusing because its storage queue was full ({@link #causedByOverload()}): then 503 with Retry-After.
 */
public final class QuorumNotReachedException extends RuntimeException {
    private final int required;
    private final int succeeded;
    private final int failed;
    private final int overloaded;
    private final int asked;
    private final boolean timedOut;

    /** @param overloaded how many of the {@code failed} replicas refused because their storage queue was full */
    public QuorumNotReachedException(String operation, int required, int succeeded, int failed, int overloaded,
                                     int asked, boolean timedOut) {
        this(operation, required, succeeded, failed, overloaded, asked, timedOut, null);
    }

    /**
     * Like the other constructor, with the first refusal as the cause (a local store's
     * {@link dev.dht.storage.StorageFullException} then gives the answer its message), or null.
     */
    public QuorumNotReachedException(String operation, int required, int succeeded, int failed, int overloaded,
                                     int asked, boolean timedOut, Throwable firstRefusal) {
        super(operation + ": " + required + " acks required, but only " + succeeded + " of " + asked
                + " replicas succeeded (" + failed + " failed"
                + (overloaded > 0 ? ", " + overloaded + " of them overloaded" : "")
                + (timedOut ? ", the rest timed out)" : ")"),
                firstRefusal, false, false);
        this.required = required;
        this.succeeded = succeeded;
        this.failed = failed;
        this.overloaded = overloaded;
        this.asked = asked;
        this.timedOut = timedOut;
    }

    /** Successes that were needed (ack). */
    public int required() {
        return required;
    }

    /** Successes that arrived in time. */
    public int succeeded() {
        return succeeded;
    }

    /** Replicas that answered with an error. */
    public int failed() {
        return failed;
    }

    /** Failed replicas that refused because their storage queue was full. */
    public int overloaded() {
        return overloaded;
    }

    /** True if quorum became impossible only because replicas were overloaded (no other failure, no timeout). */
    public boolean causedByOverload() {
        return failed > 0 && overloaded == failed && !timedOut;
    }

    /** Replicas asked (from). */
    public int asked() {
        return asked;
    }
}
