package dev.dht.replication;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;

/**
 * The deadlines of quorum waits (a coordinator's timeout and speculative retry, {@link QuorumCollector}) on one
 * hashed timing wheel shared by the process: Netty's {@link HashedWheelTimer}, the scheme of G. Varghese and
 * T. Lauck ("Hashed and Hierarchical Timing Wheels", SOSP 1987), which Kafka's request purgatory also uses
 * (hierarchically) for its per-request timeouts. Why a wheel: nearly every deadline is cancelled before it fires,
 * and adding to and cancelling in the wheel are lock-free queue offers that wake no thread (docs/performance.md,
 * "QuorumDeadlines").
 *
 * <p>Precision: a deadline fires up to one tick (5 ms) late, never early. Tasks run on the wheel's one daemon
 * thread ({@code quorum-deadlines}) and must not block: they only fail or widen a quorum wait. Safe from any
 * thread.
 */
public final class QuorumDeadlines {
    /** The wheel's tick, ms: how late a deadline may fire, and how often the wheel's thread wakes. */
    static final int TICK_MS = 5;

    /** 1024 slots of 5 ms: one turn of the wheel is about 5 s, so a 1-s deadline never waits for another round. */
    private static final Timer WHEEL = new HashedWheelTimer(
            runnable -> {
                Thread thread = new Thread(runnable, "quorum-deadlines");
                thread.setDaemon(true);
                return thread;
            },
            TICK_MS, TimeUnit.MILLISECONDS, 1024);

    private QuorumDeadlines() {
    }

    /**
     * Runs {@code task} once {@code delayNanos} ns have passed (up to one tick later), on the wheel's thread,
     * unless the returned handle is disposed first. Never blocks.
     *
     * @return disposing it cancels the task (a no-op once it ran)
     */
    public static Disposable schedule(Runnable task, long delayNanos) {
        Timeout timeout = WHEEL.newTimeout(expired -> task.run(), delayNanos, TimeUnit.NANOSECONDS);
        return new Disposable() {
            @Override
            public void dispose() {
                timeout.cancel();
            }

            @Override
            public boolean isDisposed() {
                return timeout.isCancelled() || timeout.isExpired();
            }
        };
    }
}
