package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Admission control's queueing delay rule (CoDel): client requests are refused while even the fastest admitted
 * request of the last interval took longer than the target and enough requests are in flight; a burst, a light
 * load of slow requests and a recovered node are served. The clock is a counter the test moves.
 */
class QueueDelayTest {
    private static final Duration TARGET = Duration.ofMillis(300);
    private static final Duration INTERVAL = Duration.ofMillis(100);
    private static final int MIN_IN_FLIGHT = 8;

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final QueueDelay queueDelay = new QueueDelay(TARGET, INTERVAL, clock::get);
    /** Lag never started reads 0: only the in-flight limit and the queueing delay act. */
    private final AdmissionControl control = new AdmissionControl(1000, new EventLoopLag(), Duration.ofMillis(100),
            MIN_IN_FLIGHT, queueDelay);

    @Test
    void requestsAreRefusedWhileEveryRequestOfAnIntervalWaitedLongerThanTheTarget() {
        long[] admitted = admit(MIN_IN_FLIGHT * 3);
        advance(500);
        complete(admitted, 0, MIN_IN_FLIGHT);           // 500 ms each
        advance(150);
        complete(admitted, MIN_IN_FLIGHT, MIN_IN_FLIGHT + 1); // 650 ms

        assertThat(queueDelay.standing()).as("least sojourn 500 ms > 300 ms").isTrue();
        assertThat(control.inFlight()).isEqualTo(2 * MIN_IN_FLIGHT - 1);
        assertThat(control.admit()).hasMessage("requests queued at least 500 ms over the last 100 ms with "
                + (2 * MIN_IN_FLIGHT - 1) + " in flight");
        assertThat(control.inFlight()).as("a refusal takes no slot").isEqualTo(2 * MIN_IN_FLIGHT - 1);
    }

    @Test
    void aBurstWithSomeFastRequestsInTheIntervalIsAdmitted() {
        long[] admitted = admit(MIN_IN_FLIGHT * 3);
        advance(20);
        complete(admitted, 0, 1);                        // one fast request: the queue drained once
        advance(600);
        complete(admitted, 1, MIN_IN_FLIGHT);            // the rest of the burst waited 620 ms
        advance(10);
        complete(admitted, MIN_IN_FLIGHT, MIN_IN_FLIGHT + 1); // ends the interval

        assertThat(queueDelay.minimumNanos()).isEqualTo(Duration.ofMillis(20).toNanos());
        assertThat(control.inFlight()).isGreaterThanOrEqualTo(MIN_IN_FLIGHT);
        assertThat(control.admit()).as("the least sojourn, 20 ms, is below the target").isNull();
    }

    @Test
    void slowRequestsUnderLightLoadAreAdmitted() {
        for (int round = 0; round < 5; round++) {
            long[] admitted = admit(MIN_IN_FLIGHT - 1);
            advance(800);                                // a cold JVM compiling: every request takes 800 ms
            complete(admitted, 0, admitted.length);
        }
        assertThat(queueDelay.standing()).as("least sojourn 800 ms > 300 ms").isTrue();
        assertThat(control.inFlight()).isZero();

        assertThat(admit(MIN_IN_FLIGHT)).as("fewer than %d in flight: admitted", MIN_IN_FLIGHT).hasSize(MIN_IN_FLIGHT);
        assertThat(control.admit()).as("now %d are in flight", MIN_IN_FLIGHT).isNotNull();
    }

    @Test
    void requestsAreAdmittedAgainOnceFastRequestsCompleteForAnInterval() {
        long[] slow = admit(MIN_IN_FLIGHT * 2);
        advance(400);
        complete(slow, 0, 2);
        advance(200);
        complete(slow, 2, 3);
        assertThat(control.admit()).as("a standing queue of 400 ms").isNotNull();

        advance(1);
        complete(slow, 3, slow.length);                  // the slow ones drain; in flight drops below the floor
        long[] fast = admit(MIN_IN_FLIGHT);                    // admitted below the floor despite the verdict
        advance(5);
        complete(fast, 0, 1);
        advance(INTERVAL.toMillis());
        complete(fast, 1, 2);                            // ends an interval whose least sojourn was 5 ms

        assertThat(queueDelay.standing()).isFalse();
        assertThat(admit(MIN_IN_FLIGHT)).as("admitted above the floor again").hasSize(MIN_IN_FLIGHT);
        assertThat(control.inFlight()).isGreaterThanOrEqualTo(MIN_IN_FLIGHT);
    }

    @Test
    void withoutCompletedIntervalNothingIsRefused() {
        long[] admitted = admit(MIN_IN_FLIGHT * 2);
        advance(50);
        complete(admitted, 0, 1);

        assertThat(queueDelay.minimumNanos()).as("no interval ended yet").isZero();
        assertThat(control.admit()).isNull();
    }

    @Test
    void aTargetOrIntervalThatIsNotPositiveIsRefused() {
        assertThatThrownBy(() -> new QueueDelay(Duration.ZERO, INTERVAL, clock::get))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("target must be positive, was PT0S");
        assertThatThrownBy(() -> new QueueDelay(TARGET, Duration.ofMillis(-1), clock::get))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("interval must be positive, was PT-0.001S");
    }

    /** Admits {@code count} requests, each of which must be admitted; returns their admission times. */
    private long[] admit(int count) {
        long[] admitted = new long[count];
        for (int i = 0; i < count; i++) {
            assertThat(control.admit()).as("request %d admitted", i).isNull();
            admitted[i] = control.now();
        }
        return admitted;
    }

    /** Releases the requests {@code from} (inclusive) to {@code to} (exclusive) of {@code admitted} now. */
    private void complete(long[] admitted, int from, int to) {
        for (int i = from; i < to; i++) {
            control.release(admitted[i]);
        }
    }

    private void advance(long millis) {
        clock.addAndGet(Duration.ofMillis(millis).toNanos());
    }
}
