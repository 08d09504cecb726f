package dev.dht.pacing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.UninterruptibleBlockingStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The pacing rules on a clock the test sets: what a booking waits on a fresh, a used and an idle bucket, the burst a
 * stream behind its rate may make up, debt, and the three ways to wait. No rate is measured (that is for
 * benchmarks); the waits are computed, not slept.
 */
class PacerTest {
    private static final long MS = 1_000_000;
    private final ManualClock clock = new ManualClock();
    private final List<Long> parked = new ArrayList<>();
    private final UninterruptibleBlockingStrategy recordingPark = parked::add;

    private Pacer pacer(double rate) {
        return new Pacer(rate, Pacer.BURST, clock, recordingPark);
    }

    @Test
    void aFreshPacerMakesTheFirstItemsWaitTheirOwnTime() {
        Pacer pacer = pacer(1000);

        assertThat(pacer.book(256)).as("256 items at 1000/s").isEqualTo(256 * MS);
    }

    @Test
    void aStreamOnScheduleWaitsForEachBatchInTurn() {
        Pacer pacer = pacer(1000);
        clock.advance(pacer.book(100));

        assertThat(pacer.book(100)).isEqualTo(100 * MS);
        clock.advance(40 * MS);
        assertThat(pacer.book(100)).as("60 ms left of the last batch, then 100 ms of this one").isEqualTo(160 * MS);
    }

    @Test
    void aStreamBehindItsRateMakesUpOneBurstAtMost() {
        Pacer pacer = pacer(1000);
        clock.advance(10_000 * MS); // ten seconds without a booking: 10 000 items behind

        assertThat(pacer.book(100)).as("one burst: 100 ms at 1000/s").isZero();
        assertThat(pacer.book(100)).as("the rest waits for the rate").isEqualTo(100 * MS);
    }

    @Test
    void aBatchLargerThanTheBurstPutsTheBucketIntoDebtThatTheNextBookingPays() {
        Pacer pacer = pacer(1000);

        assertThat(pacer.book(300)).isEqualTo(300 * MS);
        assertThat(pacer.book(100)).as("after the 300 booked before").isEqualTo(400 * MS);
        assertThat(pacer.tryAcquireUpTo(1000)).as("nothing while in debt").isZero();
    }

    @Test
    void tryAcquireUpToTakesWhatTheBucketHoldsNeverMoreNorTheLimitsWorth() {
        Pacer pacer = pacer(1000);
        assertThat(pacer.tryAcquireUpTo(512)).as("a fresh bucket is empty").isZero();

        clock.advance(30 * MS);
        assertThat(pacer.tryAcquireUpTo(512)).isEqualTo(30);
        assertThat(pacer.tryAcquireUpTo(512)).isZero();

        clock.advance(60_000 * MS);
        assertThat(pacer.tryAcquireUpTo(512)).as("an idle minute banks one burst").isEqualTo(100);
        clock.advance(80 * MS);
        assertThat(pacer.tryAcquireUpTo(50)).as("at most the limit").isEqualTo(50);
        assertThat(pacer.tryAcquireUpTo(50)).isEqualTo(30);
    }

    @Test
    void theBurstIsTheGivenDurationsWorthOfTheRateAndAtLeastOneItem() {
        Pacer twoTicks = new Pacer(1000, Duration.ofMillis(200), clock, recordingPark);
        Pacer slow = pacer(2);
        clock.advance(60_000 * MS);

        assertThat(twoTicks.tryAcquireUpTo(10_000)).isEqualTo(200);
        assertThat(slow.tryAcquireUpTo(10_000)).as("0.2 items rounds up to one").isEqualTo(1);
    }

    @Test
    void aFractionalRateKeepsItsFraction() {
        Pacer pacer = pacer(1.5);

        assertThat(pacer.book(3)).as("3 items at 1.5/s").isEqualTo(2_000 * MS);
    }

    @Test
    void aRateAboveTheMaximumPacesAtTheMaximum() {
        Pacer pacer = pacer(4e9);

        assertThat(pacer.book(1_000_000_000L)).isEqualTo(1_000 * MS);
    }

    @Test
    void pauseCompletesAtOnceWhenTheBucketHoldsTheItems() {
        Pacer pacer = pacer(1000);
        clock.advance(100 * MS);

        assertThat(pacer.pause(100).toFuture()).as("no timer").isDone();
        assertThat(pacer.pause(0).toFuture()).isDone();
    }

    @Test
    void pauseBooksWhenSubscribedAndCompletesAfterItsTimer() {
        Pacer pacer = pacer(1000);
        var pause = pacer.pause(50);
        assertThat(pacer.book(1)).as("nothing booked before the subscription").isEqualTo(MS);

        CompletableFuture<Void> done = pause.toFuture();
        assertThat(pacer.book(1)).as("booked: 1 + 50 + 1 items").isEqualTo(52 * MS);
        await().atMost(Duration.ofSeconds(10)).until(done::isDone);
        assertThat(done).isCompleted();
    }

    @Test
    void pauseOfMoreThanTheBucketHoldsWaitsForATimer() {
        Pacer pacer = pacer(1);

        CompletableFuture<Void> done = pacer.pause(3600).toFuture();
        assertThat(done).as("an hour's worth at 1/s").isNotDone();
        done.cancel(true);
    }

    @Test
    void acquireParksForTheBookedTimeOnlyWhenTheBucketLacksTheItems() {
        Pacer pacer = pacer(1000);

        pacer.acquire(20);
        clock.advance(20 * MS + 100 * MS);
        pacer.acquire(100);
        pacer.acquire(0);
        pacer.acquire(30);

        assertThat(parked).as("20 items on a fresh bucket, then one burst free, then 30 items").containsExactly(20 * MS,
                30 * MS);
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> Pacer.perSecond(0.5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
        assertThatThrownBy(() -> Pacer.perSecond(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Pacer.perSecond(10, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        Pacer pacer = pacer(10);
        assertThatThrownBy(() -> pacer.acquire(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pacer.tryAcquireUpTo(0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(pacer.pause(-1).toFuture()).isCompletedExceptionally();
    }

    /** A nanosecond clock that moves only when told. */
    private static final class ManualClock implements TimeMeter {
        private long nanos = 1_000_000_000L;

        void advance(long delta) {
            nanos += delta;
        }

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        public boolean isWallClockBased() {
            return false;
        }
    }
}
