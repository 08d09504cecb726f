package dev.dht.admission;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission control for client requests ({@code /v0/*}) of one node: at most {@code dht.max-in-flight-requests}
 * are served at once, and none while, with at least {@code dht.lag-shedding-min-in-flight} in flight, an event
 * loop stays more than {@code dht.max-event-loop-lag} behind ({@link EventLoopLag#sustainedNanos()}) or the
 * admitted requests form a standing queue ({@link QueueDelay}, above {@code dht.max-queue-delay}). A request
 * beyond that is answered 503 with {@code Retry-After: 1} at once, before any storage or replica work, by
 * {@link AdmissionHandler} in the Netty pipeline. Internal requests and {@code GET /v0/status} are not limited: a
 * health check must see health, not load.
 *
 * <p>The in-flight floor follows Little's law (J. D. C. Little, "A Proof for the Queuing Formula L = λW",
 * Operations Research 9(3), 1961) and CoDel's standing queue (K. Nichols, V. Jacobson, "Controlling Queue Delay",
 * ACM Queue 10(5), 2012); why each limit: docs/operations.md, "AdmissionControl".
 *
 * <p>Lock-free; called on the event loops, never blocks.
 */
public final class AdmissionControl {
    private final int limit;
    private final EventLoopLag lag;
    private final long maxLagNanos;
    private final int lagSheddingMinInFlight;
    private final QueueDelay queueDelay;
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * @param limit                  client requests served concurrently, at least 1
     * @param lag                    the event loop lag to watch
     * @param maxLag                 the sustained lag above which new client requests are refused
     * @param lagSheddingMinInFlight requests that must be in flight for the lag or a standing queue to refuse
     *                               further ones (a value above {@code limit} counts as {@code limit}); 0: the lag
     *                               or the standing queue alone refuses
     * @param queueDelay             the admitted requests' queueing delay, fed by {@link #release(long)}
     * @throws IllegalArgumentException if {@code limit} is below 1 or {@code lagSheddingMinInFlight} below 0
     * @throws NullPointerException     if {@code lag} or {@code queueDelay} is null
     */
    public AdmissionControl(int limit, EventLoopLag lag, Duration maxLag, int lagSheddingMinInFlight,
            QueueDelay queueDelay) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        if (lagSheddingMinInFlight < 0) {
            throw new IllegalArgumentException(
                    "lagSheddingMinInFlight must be at least 0, was " + lagSheddingMinInFlight);
        }
        this.limit = limit;
        this.lag = Objects.requireNonNull(lag, "lag");
        this.maxLagNanos = maxLag.toNanos();
        this.lagSheddingMinInFlight = Math.min(lagSheddingMinInFlight, limit);
        this.queueDelay = Objects.requireNonNull(queueDelay, "queueDelay");
    }

    /**
     * Admits one client request or says why not. An admitted request holds an in-flight slot until
     * {@link #release(long)}, which it calls with {@link #now()} read at its admission.
     *
     * @return null if admitted; otherwise the refusal ({@link OverloadReason#ADMISSION}), whose message says why,
     *         for the 503's body (e.g. "event loops 130 ms behind with 40 requests in flight")
     */
    public OverloadedException admit() {
        int served = inFlight.get();
        if (served >= lagSheddingMinInFlight) {
            long behind = lag.sustainedNanos();
            if (behind > maxLagNanos) {
                return refusal("event loops " + TimeUnit.NANOSECONDS.toMillis(behind) + " ms behind with " + served
                        + " requests in flight");
            }
            if (queueDelay.standing()) {
                return refusal("requests queued at least " + TimeUnit.NANOSECONDS.toMillis(queueDelay.minimumNanos())
                        + " ms over the last " + QueueDelay.INTERVAL.toMillis() + " ms with " + served
                        + " in flight");
            }
        }
        if (inFlight.incrementAndGet() > limit) {
            inFlight.decrementAndGet();
            return refusal("more than " + limit + " requests in flight");
        }
        return null;
    }

    private static OverloadedException refusal(String why) {
        return new OverloadedException(OverloadReason.ADMISSION, why);
    }

    /** The clock reading (ns) an admitted request keeps for its {@link #release(long)}. */
    public long now() {
        return queueDelay.now();
    }

    /**
     * Gives back the slot of a request {@link #admit()} admitted, once it is answered or abandoned, and counts its
     * time from admission to now as a queueing delay.
     *
     * @param admittedNanos {@link #now()} read when the request was admitted
     */
    public void release(long admittedNanos) {
        inFlight.decrementAndGet();
        queueDelay.completed(admittedNanos);
    }

    /** Client requests being served right now. */
    public int inFlight() {
        return inFlight.get();
    }
}
