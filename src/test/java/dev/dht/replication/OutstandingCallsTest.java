package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

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
    void theThresholdMustBePositive() {
        assertThatThrownBy(() -> new OutstandingCalls(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
    }
}
