package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * How a coordinator judges a peer for reads, on a settable clock: stalled while calls to it have gone unanswered
 * longer than the threshold (timed from the oldest unanswered call, not from a quiet spell before it) and no longer
 * once it answers or nothing is outstanding; slow while its smoothed answer time is above the threshold, fast again
 * after enough fast answers; a peer never timed is neither.
 */
class OutstandingCallsTest {
    private static final Duration THRESHOLD = Duration.ofMillis(50);
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final OutstandingCalls calls = new OutstandingCalls(THRESHOLD, now::get);

    private void advanceMillis(long millis) {
        now.addAndGet(Duration.ofMillis(millis).toNanos());
    }

    @Test
    void aPeerWithNothingOutstandingIsNeverStalled() {
        advanceMillis(10_000);
        assertThat(calls.stalled()).isFalse();
    }

    @Test
    void aCallSentAfterAQuietSpellIsTimedFromItsStartNotFromTheLastAnswer() {
        calls.started();
        calls.answered();
        calls.ended();
        advanceMillis(10_000);
        calls.started();
        assertThat(calls.stalled()).as("just sent").isFalse();
        advanceMillis(51);
        assertThat(calls.stalled()).as("unanswered past the threshold").isTrue();
    }

    @Test
    void callsPilingUpUnansweredMakeThePeerStalledUntilItAnswersAgain() {
        calls.started();
        advanceMillis(30);
        calls.started();
        advanceMillis(30);
        calls.started();
        assertThat(calls.stalled()).as("60 ms without an answer, 3 calls outstanding").isTrue();
        assertThat(calls.outstanding()).isEqualTo(3);

        calls.answered();
        calls.ended();
        assertThat(calls.stalled()).as("it answered one").isFalse();
        advanceMillis(51);
        assertThat(calls.stalled()).as("the other two still unanswered").isTrue();
    }

    @Test
    void callsThatEndWithoutAnAnswerKeepNoStallOnceNothingIsOutstanding() {
        calls.started();
        advanceMillis(1_000);
        assertThat(calls.stalled()).isTrue();
        calls.ended(); // timed out
        assertThat(calls.stalled()).isFalse();
        assertThat(calls.outstanding()).isZero();
    }

    @Test
    void aPeerAnsweringEveryCallLaterThanTheThresholdIsSlowButNotStalled() {
        for (int call = 0; call < 3; call++) {
            calls.started();
            advanceMillis(40); // answers every 400 ms in all, but some call is answered every 40 ms
            calls.answered(Duration.ofMillis(400).toNanos());
            calls.ended();
        }
        assertThat(calls.stalled()).as("it keeps answering").isFalse();
        assertThat(calls.slow()).as("each answer took 400 ms, above the 50-ms threshold").isTrue();
    }

    @Test
    void aSlowPeerRanksFastAgainOnceItsAnswersAreFast() {
        calls.answered(Duration.ofMillis(400).toNanos());
        int fastAnswers = 0;
        while (calls.slow()) {
            calls.answered(Duration.ofMillis(2).toNanos());
            fastAnswers++;
        }
        assertThat(fastAnswers).as("2-ms answers until the smoothed time (1/8 per sample) falls below 50 ms")
                .isBetween(15, 25);
    }

    @Test
    void aPeerNeverTimedIsNotSlow() {
        assertThat(calls.slow()).isFalse();
        calls.answered(Duration.ofMillis(3).toNanos());
        assertThat(calls.slow()).isFalse();
    }

    @Test
    void theThresholdMustBePositive() {
        assertThatThrownBy(() -> new OutstandingCalls(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
    }
}
