package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * {@link QuorumCollector} tells a quorum lost only to replicas that refused ({@link OverloadedException}, 503) from
 * one lost to other failures or a timeout (504), and keeps each replica's outcome.
 */
class QuorumOverloadTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void singleOverloadedReplicaIsAnOverloadFailure() {
        QuorumNotReachedException failure = failureOf(List.of(overloaded()), 1, TIMEOUT);

        assertThat(failure.refusedOnly()).isTrue();
        assertThat(failure.overloaded()).isEqualTo(1);
        assertThat(failure.failed()).isEqualTo(1);
        assertThat(failure.getMessage()).contains("1 of them overloaded: storage-queue-full");
    }

    @Test
    void eachReplicaOutcomeIsKeptAndTheFirstRefusalAnswers() {
        Mono<String> diskFull = Mono.error(new OverloadedException(OverloadReason.DISK_FULL, "storage full: 0 bytes"));

        QuorumNotReachedException failure = failureOf(List.of(Mono.just("ok"), diskFull, overloaded()), 3, TIMEOUT);

        assertThat(failure.refusedOnly()).isTrue();
        assertThat(failure.outcomes()).extracting(QuorumNotReachedException.ReplicaOutcome::outcome)
                .as("decided at the first refusal: 3/3 was out of reach, the last call's answer not needed")
                .containsExactly(QuorumNotReachedException.Outcome.ANSWERED, QuorumNotReachedException.Outcome.REFUSED,
                        QuorumNotReachedException.Outcome.NOT_NEEDED);
        assertThat(failure.firstRefusal().reason()).isEqualTo(OverloadReason.DISK_FULL);
    }

    @Test
    void quorumLostToAnOverloadAndAnotherFailureIsNotAnOverloadFailure() {
        Mono<String> broken = Mono.error(new IllegalStateException("connection refused"));

        QuorumNotReachedException failure = failureOf(List.of(overloaded(), broken, Mono.just("ok")), 2, TIMEOUT);

        assertThat(failure.refusedOnly()).isFalse();
        assertThat(failure.overloaded()).isEqualTo(1);
        assertThat(failure.failed()).isEqualTo(2);
        assertThat(failure.getMessage()).as("the 504's message names why the overloaded replica refused")
                .endsWith("(2 failed, 1 of them overloaded: storage-queue-full)");
    }

    @Test
    void quorumLostToATimeoutIsNotAnOverloadFailure() {
        QuorumNotReachedException failure = failureOf(List.of(overloaded(), Mono.never()), 1, Duration.ofMillis(200));

        assertThat(failure.refusedOnly()).isFalse();
        assertThat(failure.getMessage()).contains("timed out");
    }

    private static Mono<String> overloaded() {
        return Mono.error(new OverloadedException(OverloadReason.STORAGE_QUEUE_FULL, "storage queue full (1 tasks waiting)"));
    }

    private static QuorumNotReachedException failureOf(List<Mono<String>> calls, int ack, Duration timeout) {
        Throwable error = ScriptedCalls.firstAcks("PUT", calls, ack, timeout)
                .materialize().block(Duration.ofSeconds(60)).getThrowable();
        assertThat(error).isInstanceOf(QuorumNotReachedException.class);
        return (QuorumNotReachedException) error;
    }
}
