package dev.dht.pacing;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.UninterruptibleBlockingStrategy;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Paces one stream of background work (records, keys, hints, bytes) to at most {@code rate} items per second: a
 * token bucket (Bucket4j) that refills greedily at the rate, from which the stream books its items.
 *
 * <p>The burst: the bucket holds at most {@link #BURST} worth of the rate by default (at least one item), and a new
 * pacer starts empty. So a stream's first items wait their own time like all others; a stream that fell behind its
 * rate (the disk or a peer was slower) makes up at most one burst at once, never all it missed; a stream that idled
 * banks no more than one burst. A burst this short still absorbs the lateness of timers and of parked threads (a
 * millisecond or so on a busy machine), which would otherwise add up and pull the rate below the setting.
 *
 * <p>Booking may put the bucket into debt (a batch larger than the burst): the wait returned covers the debt, and
 * the items booked next wait for it too. Three ways to wait:
 * <ul>
 *   <li>{@link #pause}: a {@link Mono} that completes once the items may pass, a {@link Mono#delay} timer on
 *       Reactor's parallel scheduler, so no thread waits: for streams on event loops or storage threads;</li>
 *   <li>{@link #acquire}: parks the calling thread: only for threads of their own that may block;</li>
 *   <li>{@link #tryAcquireUpTo}: as many as the bucket holds now, up to a limit, never waiting nor in debt.</li>
 * </ul>
 * Thread-safe (Bucket4j's lock-free bucket); one pacer per stream that has a rate of its own.
 */
public final class Pacer {
    /** What the bucket holds at most by default: this long's worth of the rate. */
    public static final Duration BURST = Duration.ofMillis(100);
    /** The highest rate a pacer keeps, items per second: Bucket4j refills at most one token per nanosecond. */
    public static final double MAX_RATE = 1e9;
    private static final Duration SECOND = Duration.ofSeconds(1);
    /** The refill period of a fractional rate, which is kept to a thousandth of an item per second. */
    private static final Duration FRACTIONAL_PERIOD = Duration.ofSeconds(1000);

    private final Bucket bucket;
    private final UninterruptibleBlockingStrategy park;

    /**
     * A pacer of {@code rate} items per second with the default {@link #BURST}.
     *
     * @param rate items per second, at most; a rate above {@link #MAX_RATE} paces at that rate
     * @throws IllegalArgumentException if {@code rate} is below 1
     */
    public static Pacer perSecond(double rate) {
        return perSecond(rate, BURST);
    }

    /**
     * A pacer of {@code rate} items per second whose bucket holds {@code burst}'s worth of the rate (at least one
     * item).
     *
     * @throws IllegalArgumentException if {@code rate} is below 1 or {@code burst} is not positive
     */
    public static Pacer perSecond(double rate, Duration burst) {
        return new Pacer(rate, burst, TimeMeter.SYSTEM_NANOTIME, UninterruptibleBlockingStrategy.PARKING);
    }

    /** A pacer that reads time from {@code clock} and parks threads with {@code park} (tests). */
    Pacer(double rate, Duration burst, TimeMeter clock, UninterruptibleBlockingStrategy park) {
        if (!(rate >= 1)) {
            throw new IllegalArgumentException("rate must be at least 1 per second, was " + rate);
        }
        if (burst.isNegative() || burst.isZero()) {
            throw new IllegalArgumentException("burst must be positive, was " + burst);
        }
        double perSecond = Math.min(rate, MAX_RATE);
        long capacity = Math.max(1, (long) Math.ceil(perSecond * burst.toNanos() / SECOND.toNanos()));
        boolean whole = perSecond == Math.rint(perSecond);
        long refillTokens = whole ? (long) perSecond : Math.round(perSecond * FRACTIONAL_PERIOD.toSeconds());
        Duration refillPeriod = whole ? SECOND : FRACTIONAL_PERIOD;
        this.bucket = Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(capacity).refillGreedy(refillTokens, refillPeriod)
                        .initialTokens(0).build())
                .withCustomTimePrecision(clock)
                .build();
        this.park = park;
    }

    /**
     * Books {@code items} and returns the nanoseconds until they may pass: 0 if the bucket held them, else the time
     * its refill takes to cover them (and any debt). Never waits.
     *
     * @throws IllegalArgumentException if {@code items} is negative
     */
    long book(long items) {
        if (items < 0) {
            throw new IllegalArgumentException("items must not be negative, was " + items);
        }
        return items == 0 ? 0 : bucket.consumeIgnoringRateLimits(items);
    }

    /**
     * Books {@code items} when subscribed and completes once they may pass: at once if the bucket held them, else
     * after a {@link Mono#delay} on Reactor's parallel scheduler (what follows then runs on that timer's thread). No
     * thread waits, so it may be used on event loops and storage threads.
     *
     * @throws IllegalArgumentException (as the Mono's error) if {@code items} is negative
     */
    public Mono<Void> pause(long items) {
        return Mono.defer(() -> {
            long wait = book(items);
            return wait == 0 ? Mono.empty() : Mono.delay(Duration.ofNanos(wait)).then();
        });
    }

    /**
     * Books {@code items} and parks the calling thread until they may pass. Blocks: call it only on a thread of its
     * own, never on an event loop or a storage thread. Interrupts do not end the wait; the thread's interrupt flag
     * is kept for the caller.
     *
     * @throws IllegalArgumentException if {@code items} is negative
     */
    public void acquire(long items) {
        if (items < 0) {
            throw new IllegalArgumentException("items must not be negative, was " + items);
        }
        if (items > 0) {
            bucket.asBlocking().consumeUninterruptibly(items, park);
        }
    }

    /**
     * Takes as many items as the bucket holds now, up to {@code most}, and returns how many (0 if none). Never
     * waits and never books beyond what the bucket holds.
     *
     * @throws IllegalArgumentException if {@code most} is below 1
     */
    public long tryAcquireUpTo(long most) {
        if (most < 1) {
            throw new IllegalArgumentException("most must be at least 1, was " + most);
        }
        return bucket.tryConsumeAsMuchAsPossible(most);
    }
}
