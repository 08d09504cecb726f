package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ChangePhase;
import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.testing.SettableClock;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/**
 * When a member counts as dead for a change, on a settable clock: after {@code dht.change-failure-timeout} of
 * silence, counted from its last answer as the node's one failure detector saw it, and from the change's start at the
 * earliest; the change's phases, leader changes and failed calls do not restart the count.
 */
class ChangeLivenessTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final URI JOINER = URI.create("http://dht-3.dht:8080");

    private final SettableClock clock = new SettableClock(0);
    private final LongSupplier nanoTime = () -> clock.millis() * 1_000_000;
    private final PeerHealth health = new PeerHealth(nanoTime);
    private final ChangeLiveness liveness = new ChangeLiveness(health, TIMEOUT, nanoTime);
    private final Node member = new Node(URI.create("http://dht-1.dht:8080"), false);

    @Test
    void aMemberIsDeadAfterTheTimeoutFromItsLastAnswerWhateverHappensMeanwhile() {
        health.succeeded(member);
        liveness.observe(join(ChangePhase.WRITE_BOTH_READ_OLD));
        clock.advance(Duration.ofSeconds(2));
        health.succeeded(member); // its last answer
        for (int second = 0; second < 9; second++) {
            clock.advance(Duration.ofSeconds(1));
            // the change moves on, the log's leader changes (the coordinator has nothing to reset), calls fail
            liveness.observe(join(second < 4 ? ChangePhase.WRITE_BOTH_READ_OLD : ChangePhase.STREAMING));
            health.failed(member, new ConnectException("Connection refused"));
            assertThat(liveness.downTooLong(member)).as("%d s after its last answer", second + 1).isFalse();
        }
        clock.advance(Duration.ofSeconds(1));
        assertThat(liveness.downTooLong(member)).as("10 s after its last answer").isTrue();

        health.succeeded(member);
        assertThat(liveness.downTooLong(member)).as("answered again").isFalse();
    }

    @Test
    void aSilenceFromBeforeTheChangeCountsFromTheChangesStart() {
        health.succeeded(member);
        clock.advance(Duration.ofSeconds(30)); // silent, no change in progress: down too long already
        assertThat(liveness.downTooLong(member)).isTrue();

        liveness.observe(join(ChangePhase.WRITE_BOTH_READ_OLD));
        clock.advance(Duration.ofSeconds(9));
        liveness.observe(join(ChangePhase.STREAMING));
        assertThat(liveness.downTooLong(member)).as("9 s into the change").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(liveness.downTooLong(member)).as("10 s into the change").isTrue();

        liveness.observe(null);
        liveness.observe(new ClusterChange(ChangeKind.DECOMMISSION, member.url(), ChangePhase.WRITE_BOTH_READ_OLD));
        assertThat(liveness.downTooLong(member)).as("a new change starts its own count").isFalse();
    }

    @Test
    void thisNodeIsNeverDown() {
        Node self = new Node(URI.create("http://dht-0.dht:8080"), true);
        liveness.observe(join(ChangePhase.STREAMING));
        clock.advance(Duration.ofMinutes(5));
        assertThat(liveness.downTooLong(self)).isFalse();
        assertThat(liveness.downTooLong(member)).as("a member never heard from: its silence counts from the first question about it").isFalse();
        clock.advance(TIMEOUT);
        assertThat(liveness.downTooLong(member)).isTrue();
    }

    private static ClusterChange join(ChangePhase phase) {
        return new ClusterChange(ChangeKind.JOIN, JOINER, phase);
    }
}
