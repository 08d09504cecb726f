package dev.dht.cluster;

import java.time.Duration;

/**
 * Whether this node's cluster view is confirmed fresh enough to serve clients under: not right after a start, and
 * not after a pause of the process long enough that it may have been removed meanwhile (HBase's JvmPauseMonitor
 * idea). A ticker calls {@link #tick} often; a client request that finds the last tick older than the pause
 * threshold treats the node as paused (the ticker may not have run yet after a SIGSTOP), un-confirms the view and
 * asks for a check ({@code onPause}); {@link #confirm} ends it. Thread-safe; never blocks (a volatile read and a
 * clock read per request).
 */
public final class ViewConfirmation {
    /** Confirmed for good, with no ticker: tests and tools that serve under a fixed membership. */
    public static final ViewConfirmation ALWAYS = new ViewConfirmation(Duration.ZERO, () -> { });
    private final long pauseNanos;
    private final Runnable onPause;
    private volatile boolean confirmed;
    private volatile long lastTickNanos;

    /**
     * Starts unconfirmed (until the first check), except {@link #ALWAYS}.
     *
     * @param pause   a gap between two ticks at least this long is a pause
     * @param onPause called (on the detecting thread; it must not block) when a pause is detected
     */
    public ViewConfirmation(Duration pause, Runnable onPause) {
        this.pauseNanos = pause.toNanos();
        this.onPause = onPause;
        this.confirmed = pause.isZero();
    }

    /** True if clients may be served: the view was checked since the start and the last pause. */
    public boolean isConfirmed() {
        if (pauseNanos > 0 && lastTickNanos != 0 && System.nanoTime() - lastTickNanos > pauseNanos) {
            paused();
        }
        return confirmed;
    }

    /** The ticker's beat; detects a pause since the last one. */
    public void tick() {
        long now = System.nanoTime();
        long last = lastTickNanos;
        if (last != 0 && now - last > pauseNanos) {
            paused();
        }
        lastTickNanos = now;
    }

    private void paused() {
        if (confirmed) {
            synchronized (this) {
                if (!confirmed) {
                    return;
                }
                confirmed = false;
                lastTickNanos = System.nanoTime();
            }
            onPause.run();
        }
    }

    /** The view was checked: clients may be served again. */
    public void confirm() {
        confirmed = true;
    }
}
