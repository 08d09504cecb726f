package dev.dht.peer;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The idle timeout of a stream counts only time in which data is wanted and does not come. */
class IdleStreamTimeoutTest {
    private static final Duration IDLE = Duration.ofMillis(300);

    @Test
    void aSourceThatStopsSendingWhileDataIsWantedFails() {
        Flux<Integer> stalling = Flux.just(1, 2).concatWith(Flux.never());
        StepVerifier.create(IdleStreamTimeout.watch(stalling, IDLE, "peer-b"))
                .expectNext(1, 2)
                .expectErrorSatisfies(error -> org.assertj.core.api.Assertions.assertThat(error)
                        .isInstanceOf(TimeoutException.class)
                        .hasMessageStartingWith("peer-b sent nothing for ")
                        .hasMessageEndingWith("while data was wanted (idle timeout 300 ms)"))
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void aConsumerThatPausesLongerThanTheIdleTimeoutGetsEverything() {
        StepVerifier.create(IdleStreamTimeout.watch(Flux.range(1, 5), IDLE, "peer-b"), 1)
                .expectNext(1)
                .thenAwait(IDLE.multipliedBy(3))
                .thenRequest(4)
                .expectNext(2, 3, 4, 5)
                .verifyComplete();
    }

    @Test
    void aSlowButSteadySourceDoesNotFail() {
        Flux<Long> steady = Flux.interval(IDLE.dividedBy(3)).take(10);
        StepVerifier.create(IdleStreamTimeout.watch(steady, IDLE, "peer-b"))
                .expectNextCount(10)
                .verifyComplete();
    }

    @Test
    void aNonPositiveIdleTimeoutIsRefused() {
        assertThatThrownBy(() -> IdleStreamTimeout.watch(Flux.just(1), Duration.ZERO, "peer-b"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
