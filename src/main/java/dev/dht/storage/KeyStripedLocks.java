package dev.dht.storage;

import java.util.Arrays;

/**
 * A fixed set of monitors, one chosen per key by the hash of its bytes, so that work on the same key is
 * serialised without a lock object per key. Different keys may share a stripe. Callers block on the monitor
 * ({@code synchronized}); storage scheduler threads only.
 */
final class KeyStripedLocks {
    /** How many stripes (and monitors) there are; {@link #stripeOf} is in {@code [0, STRIPES)}. */
    static final int STRIPES = 1024;

    private final Object[] locks = new Object[STRIPES];

    KeyStripedLocks() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new Object();
        }
    }

    /** The stripe of {@code key}: the same one for equal key bytes. */
    static int stripeOf(byte[] key) {
        return (Arrays.hashCode(key) & 0x7fffffff) % STRIPES;
    }

    /** The monitor of {@code stripe} ({@link #stripeOf}). */
    Object lock(int stripe) {
        return locks[stripe];
    }

    /** The monitor for {@code key}: the same one for equal key bytes. */
    Object lockFor(byte[] key) {
        return locks[stripeOf(key)];
    }
}
