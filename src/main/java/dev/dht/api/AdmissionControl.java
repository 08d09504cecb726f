package dev.dht.api;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission control for client requests ({@code /v0/*}) of one node: at most {@code dht.max-in-flight-requests}
 * are served at once, and none while an event loop stays more than {@code dht.max-event-loop-lag} behind
 * ({@link EventLoopLag#sustainedNanos()}). A request beyond that is answered 503 with {@code Retry-After: 1} at
 * once, before any storage or replica work, by {@link AdmissionHandler} in the Netty pipeline. Under overload the
 * node thus sheds the excess promptly instead of letting latency and memory grow without bound. The in-flight
 * count sees requests being served; the lag also sees requests still waiting unread in the sockets of a loop
 * that cannot keep up, where an overloaded node queues most. Internal (replica) requests are not limited: their
 * coordinators' connection pools bound them.
 *
 * <p>Lock-free; called on the event loops, never blocks.
 */
public final class AdmissionControl {
    private final int limit;
    private final EventLoopLag lag;
    private final long maxLagNanos;
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * @param limit  client requests served concurrently, at least 1
     * @param lag    the event loop lag to watch
     * @param maxLag the sustained lag above which new client requests are refused
     * @throws IllegalArgumentException if {@code limit} is below 1
     */
    public AdmissionControl(int limit, EventLoopLag lag, Duration maxLag) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        this.limit = limit;
        this.lag = lag;
        this.maxLagNanos = maxLag.toNanos();
    }

    /**
     * Admits one client request or says why not. An admitted request holds an in-flight slot until
     * {@link #release()}.
     *
     * @return null if admitted; otherwise the reason for the refusal, for the 503's body (e.g. "event loops 130
     *         ms behind")
     */
    public String admit() {
        long behind = lag.sustainedNanos();
        if (behind > maxLagNanos) {
            return "event loops " + TimeUnit.NANOSECONDS.toMillis(behind) + " ms behind";
        }
        if (inFlight.incrementAndGet() > limit) {
            inFlight.decrementAndGet();
            return "more than " + limit + " requests in flight";
        }
        return null;
    }

    /** Gives back the slot of a request {@link #admit()} admitted, once it is answered or abandoned. */
    public void release() {
        inFlight.decrementAndGet();
    }

    /** Client requests being served right now. */
    public int inFlight() {
        return inFlight.get();
    }
}
