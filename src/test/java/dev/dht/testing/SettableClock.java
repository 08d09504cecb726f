package dev.dht.testing;

import java.time.Duration;

/** A wall clock that stays where the test puts it (UTC); thread-safe. */
public final class SettableClock extends UtcMillisClock {
    private volatile long millis;

    /** A clock standing at {@code millis} ms since the epoch. */
    public SettableClock(long millis) {
        this.millis = millis;
    }

    /** Puts the clock at {@code millis} ms since the epoch (also backwards). */
    public void set(long millis) {
        this.millis = millis;
    }

    /** Moves the clock by {@code step} (negative: back). */
    public void advance(Duration step) {
        this.millis += step.toMillis();
    }

    @Override
    public long millis() {
        return millis;
    }
}
