package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * {@link QuorumCollector} tells a quorum lost only to overloaded replicas (503) from one lost to other failures or a
 * timeout (504).
 */
class QuorumOverloadTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void singleOverloadedReplicaIsAnOverloadFailure() {
        QuorumNotReachedException failure = failureOf(List.of(overloaded()), 1, TIMEOUT);

        assertThat(failure.causedByOverload()).isTrue();
        assertThat(failure.overloaded()).isEqualTo(1);
        assertThat(failure.failed()).isEqualTo(1);
        assertThat(failure.getMessage()).contains("1 of them overloaded");
    }

    @Test
    void rejectionWrappedAsACauseCountsAsOverload() {
        Mono<String> wrapped = Mono.error(new IllegalStateException("scheduler", new RejectedExecutionException("full")));

        assertThat(failureOf(List.of(wrapped, overloaded(), Mono.just("ok")), 2, TIMEOUT).causedByOverload()).isTrue();
    }

    @Test
    void quorumLostToAnOverloadAndAnotherFailureIsNotAnOverloadFailure() {
        Mono<String> broken = Mono.error(new IllegalStateException("connection refused"));

        QuorumNotReachedException failure = failureOf(List.of(overloaded(), broken, Mono.just("ok")), 2, TIMEOUT);

        assertThat(failure.causedByOverload()).isFalse();
        assertThat(failure.overloaded()).isEqualTo(1);
        assertThat(failure.failed()).isEqualTo(2);
    }

    @Test
    void quorumLostToATimeoutIsNotAnOverloadFailure() {
        QuorumNotReachedException failure = failureOf(List.of(overloaded(), Mono.never()), 1, Duration.ofMillis(200));

        assertThat(failure.causedByOverload()).isFalse();
        assertThat(failure.getMessage()).contains("timed out");
    }

    private static Mono<String> overloaded() {
        return Mono.error(new RejectedExecutionException("storage queue full (1 tasks waiting)"));
    }

    private static QuorumNotReachedException failureOf(List<Mono<String>> calls, int ack, Duration timeout) {
        Throwable error = QuorumCollector.firstAcks("PUT", calls, ack, timeout)
                .materialize().block(Duration.ofSeconds(60)).getThrowable();
        assertThat(error).isInstanceOf(QuorumNotReachedException.class);
        return (QuorumNotReachedException) error;
    }
}
