package dev.dht.storage;

import java.util.Arrays;

/**
 * A fixed set of monitors, one chosen per key by the hash of its bytes, so that work on the same key is
 * serialised without a lock object per key. Different keys may share a stripe. Callers block on the monitor
 * ({@code synchronized}); storage scheduler threads only.
 */
final class KeyStripedLocks {
    private static final int STRIPES = 1024;

    private final Object[] locks = new Object[STRIPES];

    KeyStripedLocks() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new Object();
        }
    }

    /** The monitor for {@code key}: the same one for equal key bytes. */
    Object lockFor(byte[] key) {
        return locks[(Arrays.hashCode(key) & 0x7fffffff) % STRIPES];
    }
}
