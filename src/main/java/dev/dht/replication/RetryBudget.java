package dev.dht.replication;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps speculative retries at a share of the reads, after Finagle's {@code RetryBudget} (and the retry budgets
 * of gRPC and Envoy): every read deposits {@code ratio} of a retry, every retry withdraws a whole one, and the
 * balance is capped at {@link #MAX_BALANCE} retries. So at most about {@code ratio} of the reads speculate,
 * however slow the replicas get. Without the cap, an overloaded cluster, in which every replica answers late,
 * would speculate on every read and add {@code from - ack} replica reads to each, exactly when there is no
 * capacity for them. Retries after a failed call are not speculative and not budgeted: a quorum needs them.
 *
 * <p>Thread-safe and lock-free (one CAS per call); never blocks.
 */
final class RetryBudget {
    /** Balance unit: a thousandth of a retry. */
    private static final int SCALE = 1000;
    /** Retries that may be saved up in quiet times, and the balance a new budget starts with. */
    static final int MAX_BALANCE = 10;

    private final int deposit;
    private final AtomicInteger balance = new AtomicInteger(MAX_BALANCE * SCALE);

    /** @param ratio retries allowed per read, e.g. 0.1 for 10 %; between 0 and 1 */
    RetryBudget(double ratio) {
        if (!(ratio >= 0 && ratio <= 1)) {
            throw new IllegalArgumentException("ratio must be between 0 and 1, was " + ratio);
        }
        this.deposit = (int) Math.round(ratio * SCALE);
    }

    /** Credits one read. */
    void deposit() {
        int current;
        do {
            current = balance.get();
            if (current >= MAX_BALANCE * SCALE) {
                return;
            }
        } while (!balance.compareAndSet(current, Math.min(MAX_BALANCE * SCALE, current + deposit)));
    }

    /** Takes one retry if the balance holds one; false (and nothing taken) otherwise. */
    boolean tryWithdraw() {
        int current;
        do {
            current = balance.get();
            if (current < SCALE) {
                return false;
            }
        } while (!balance.compareAndSet(current, current - SCALE));
        return true;
    }
}
