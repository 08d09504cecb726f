package dev.dht.node;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;

/**
 * Whether this node may answer reads as a replica. A node started with {@code dht.rebuild=true} has an empty
 * (or stale) store until it has streamed its records from its peers ({@code dev.dht.repair.NodeRebuild}); until
 * then its replica reads fail fast, so coordinators ask other replicas: {@code GET /internal/record} answers 503
 * and the coordinator's in-process read of this node fails, both with {@link OverloadedException}
 * ({@link OverloadReason#REBUILDING}).
 * Writes are accepted meanwhile. Thread-safe; never blocks.
 */
public final class RebuildGate {
    private volatile boolean rebuilding;

    /** @param rebuilding true to start closed (a rebuild is about to run), false to start open */
    public RebuildGate(boolean rebuilding) {
        this.rebuilding = rebuilding;
    }

    /** A gate that is open for good (no rebuild). */
    public static RebuildGate open() {
        return new RebuildGate(false);
    }

    /**
     * Returns normally if replica reads may be answered.
     *
     * @throws OverloadedException ({@link OverloadReason#REBUILDING}) while a rebuild runs (503 on the internal API)
     */
    public void checkReadable() {
        if (rebuilding) {
            throw refusal();
        }
    }

    /**
     * The refusal of a replica read while this node rebuilds: 503 with Retry-After on the internal API, and a
     * failed replica read that a coordinator replaces by asking another replica.
     */
    public static OverloadedException refusal() {
        return new OverloadedException(OverloadReason.REBUILDING,
                "this node is rebuilding its store and does not answer reads as a replica yet");
    }

    /** True while a rebuild runs. */
    public boolean isRebuilding() {
        return rebuilding;
    }

    /** Opens the gate: the rebuild is complete and replica reads are answered from now on. */
    public void finish() {
        rebuilding = false;
    }
}
