package dev.dht.peer;

import dev.dht.cluster.Node;
import java.net.URI;

/** Test fixture: a node with no cluster view at all: epoch 0 sent, no sender header, higher epochs ignored. */
public final class NoEpochTracker implements EpochTracker {
    /** The one instance; it has no state. */
    public static final EpochTracker INSTANCE = new NoEpochTracker();

    private NoEpochTracker() {
    }

    @Override
    public long epoch() {
        return 0;
    }

    @Override
    public URI self() {
        return null;
    }

    @Override
    public void newerEpochSeen(Node peer, long epoch) {
    }
}
