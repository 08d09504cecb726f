package dev.dht.replication;

/**
 * Fewer than {@code ack} replicas succeeded, either because too many failed for {@code ack} to be reachable
 * or because the replica timeout passed. Answered as 504 Gateway Timeout.
 */
public final class QuorumNotReachedException extends RuntimeException {
    private final int required;
    private final int succeeded;
    private final int failed;
    private final int asked;

    public QuorumNotReachedException(String operation, int required, int succeeded, int failed, int asked,
                                     boolean timedOut) {
        super(operation + ": " + required + " acks required, but only " + succeeded + " of " + asked
                + " replicas succeeded (" + failed + " failed" + (timedOut ? ", the rest timed out)" : ")"),
                null, false, false);
        this.required = required;
        this.succeeded = succeeded;
        this.failed = failed;
        this.asked = asked;
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

    /** Replicas asked (from). */
    public int asked() {
        return asked;
    }
}
