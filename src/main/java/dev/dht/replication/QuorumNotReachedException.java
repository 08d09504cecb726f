package dev.dht.replication;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Fewer than {@code ack} replicas succeeded, either because too many failed for {@code ack} to be reachable
 * or because the replica timeout passed (after Cassandra's {@code WriteTimeoutException(cl, received, blockFor)}
 * and {@code UnavailableException}). It holds what each replica asked did ({@link #outcomes()}). Answered as 504
 * Gateway Timeout, except when every replica that failed refused for want of capacity and none timed out
 * ({@link #refusedOnly()}): then 503 with Retry-After, since nothing was applied where it was refused and a retry
 * later may succeed; and except when this node's own store failed with an error ({@link #localError()}): then 500,
 * logged, since the fault is this node's, not a replica's that did not answer in time.
 */
public final class QuorumNotReachedException extends RuntimeException {

    /** What one replica did by the time the quorum was decided. */
    public enum Outcome {
        /** It succeeded. */
        ANSWERED,
        /** It refused for want of capacity ({@link OverloadedException}). */
        REFUSED,
        /** It failed otherwise (an error status, a broken connection, a local error). */
        FAILED,
        /** It was still running when the timeout passed. */
        TIMED_OUT,
        /** It was still running, or not asked yet, when too many failures made the quorum impossible. */
        NOT_NEEDED
    }

    /**
     * One replica's part: its {@link Outcome}, for {@link Outcome#REFUSED} and {@link Outcome#FAILED} the failure
     * (else null), and whether the replica is this node's own store ({@link Replica#isLocal()}).
     */
    public record ReplicaOutcome(Outcome outcome, Throwable failure, boolean local) {
    }

    private final int required;
    private final List<ReplicaOutcome> outcomes;

    /**
     * @param operation name used in the message (e.g. "PUT")
     * @param required  successes that were needed (ack)
     * @param outcomes  one per replica of the plan, in the plan's order
     */
    public QuorumNotReachedException(String operation, int required, List<ReplicaOutcome> outcomes) {
        super(message(operation, required, outcomes), firstRefusal(outcomes), false, false);
        this.required = required;
        this.outcomes = List.copyOf(outcomes);
    }

    private static String message(String operation, int required, List<ReplicaOutcome> outcomes) {
        int succeeded = count(outcomes, Outcome.ANSWERED);
        int refused = count(outcomes, Outcome.REFUSED);
        int failed = refused + count(outcomes, Outcome.FAILED);
        boolean timedOut = count(outcomes, Outcome.TIMED_OUT) > 0;
        return operation + ": " + required + " acks required, but only " + succeeded + " of " + outcomes.size()
                + " replicas succeeded (" + failed + " failed"
                + (refused > 0 ? ", " + refused + " of them overloaded: " + refusalReasons(outcomes) : "")
                + (timedOut ? ", the rest timed out)" : ")");
    }

    /** The reasons of the refusals, by token in the plan's order, each once: "rebuilding, storage-queue-full". */
    private static String refusalReasons(List<ReplicaOutcome> outcomes) {
        return outcomes.stream().filter(outcome -> outcome.outcome() == Outcome.REFUSED)
                .map(outcome -> ((OverloadedException) outcome.failure()).reason().token())
                .distinct().collect(Collectors.joining(", "));
    }

    private static OverloadedException firstRefusal(List<ReplicaOutcome> outcomes) {
        for (ReplicaOutcome outcome : outcomes) {
            if (outcome.outcome() == Outcome.REFUSED) {
                return (OverloadedException) outcome.failure();
            }
        }
        return null;
    }

    private static int count(List<ReplicaOutcome> outcomes, Outcome wanted) {
        int count = 0;
        for (ReplicaOutcome outcome : outcomes) {
            count += outcome.outcome() == wanted ? 1 : 0;
        }
        return count;
    }

    /** What each replica did, in the plan's order. */
    public List<ReplicaOutcome> outcomes() {
        return outcomes;
    }

    /** Successes that were needed (ack). */
    public int required() {
        return required;
    }

    /** Successes that arrived in time. */
    public int succeeded() {
        return count(outcomes, Outcome.ANSWERED);
    }

    /** Replicas that answered with an error or refused. */
    public int failed() {
        return count(outcomes, Outcome.REFUSED) + count(outcomes, Outcome.FAILED);
    }

    /** Failed replicas that refused for want of capacity. */
    public int overloaded() {
        return count(outcomes, Outcome.REFUSED);
    }

    /** True if quorum became impossible only because replicas refused (no other failure, no timeout): a 503. */
    public boolean refusedOnly() {
        return overloaded() > 0 && count(outcomes, Outcome.FAILED) == 0 && count(outcomes, Outcome.TIMED_OUT) == 0;
    }

    /**
     * The refusal that answers a {@link #refusedOnly()} failure: the first replica's that refused, or null if none
     * did. Its reason tells a full disk ({@link OverloadReason#DISK_FULL}) from an overload.
     */
    public OverloadedException firstRefusal() {
        return (OverloadedException) getCause();
    }

    /**
     * The error this node's own store failed with ({@link Outcome#FAILED} of the local replica: an I/O error, an
     * {@link OutOfMemoryError}, ...), or null if it was not asked, succeeded, refused, or is still running. A
     * single node's write that fails is this, never a timeout: the coordinator waits for its own store.
     */
    public Throwable localError() {
        for (ReplicaOutcome outcome : outcomes) {
            if (outcome.local() && outcome.outcome() == Outcome.FAILED) {
                return outcome.failure();
            }
        }
        return null;
    }

    /** Replicas in the plan (from). */
    public int asked() {
        return outcomes.size();
    }
}
