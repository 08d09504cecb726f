package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The in-flight limit: requests beyond it are refused with a reason until a slot is given back. */
class AdmissionControlTest {
    /** A queueing delay that never stands in these tests (its target is an hour): the other rules act alone. */
    private static final QueueDelay NEVER_STANDING = new QueueDelay(Duration.ofHours(1), QueueDelay.INTERVAL,
            System::nanoTime);

    /** An event loop lag that is never started reads 0: here only the in-flight limit acts. */
    private final AdmissionControl control = new AdmissionControl(2, new EventLoopLag(), Duration.ofMillis(100), 0,
            NEVER_STANDING);

    @Test
    void requestsBeyondTheLimitAreRefusedUntilASlotIsGivenBack() {
        assertThat(control.admit()).isNull();
        assertThat(control.admit()).isNull();
        assertThat(control.inFlight()).isEqualTo(2);

        assertThat(control.admit()).hasMessage("more than 2 requests in flight");
        assertThat(control.inFlight()).as("a refusal takes no slot").isEqualTo(2);

        control.release(control.now());
        assertThat(control.admit()).as("admitted once a slot was given back").isNull();
        control.release(control.now());
        control.release(control.now());
        assertThat(control.inFlight()).isZero();
    }

    @Test
    void aLimitBelowOneIsRefused() {
        assertThatThrownBy(() -> new AdmissionControl(0, new EventLoopLag(), Duration.ofMillis(100), 0, NEVER_STANDING))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
    }

    @Test
    void aNegativeInFlightFloorForLagSheddingIsRefused() {
        assertThatThrownBy(() -> new AdmissionControl(2, new EventLoopLag(), Duration.ofMillis(100), -1,
                NEVER_STANDING))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lagSheddingMinInFlight must be at least 0, was -1");
    }
}
