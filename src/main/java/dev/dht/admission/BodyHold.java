package dev.dht.admission;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request body, now a value, that replica writes may still hold after its request ended: {@link AdmissionHandler}
 * gives the body's bytes back to {@link BodyMemory} when the request ends, but a write whose client went away (or
 * that was answered before its slower replicas) still holds the value until every replica call is done with it.
 * The hold counts the value's bytes again ({@link BodyMemory#hold(long)}) from {@link #requestEnded()} until
 * {@link #settled()}, so a client that sends large bodies and closes the connection at once cannot pile up values
 * in the storage queue beyond the limit. Counts nothing when the writes settle first (the usual case on one node).
 *
 * <p>Each method is called once, in either order, from any thread; lock-free, never blocks.
 */
public final class BodyHold {
    private static final int RUNNING = 0;
    private static final int HOLDING = 1;
    private static final int SETTLED = 2;

    private final BodyMemory memory;
    private final long bytes;
    private final AtomicInteger state = new AtomicInteger(RUNNING);

    /** A hold of {@code bytes} (the value's size) in {@code memory}, counting nothing yet. */
    public BodyHold(BodyMemory memory, long bytes) {
        this.memory = memory;
        this.bytes = bytes;
    }

    /** The request ended (answered, failed or cancelled): its bytes are counted here while writes still hold them. */
    public void requestEnded() {
        memory.hold(bytes);
        if (!state.compareAndSet(RUNNING, HOLDING)) {
            memory.release(bytes); // the writes settled first
        }
    }

    /** Every write that held the value is done with it: its bytes are given back if they were held. */
    public void settled() {
        if (state.getAndSet(SETTLED) == HOLDING) {
            memory.release(bytes);
        }
    }
}
