package dev.dht.replication;

import static dev.dht.replication.ScriptedCalls.awaitAcks;
import static dev.dht.replication.ScriptedCalls.firstAcks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** Quorum waiting with no sockets: replica calls are plain Monos that succeed, fail, are slow or never answer ({@link ScriptedCalls}). */
class QuorumCollectorTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Test
    void completesWithTheFirstAckSuccessesWithoutWaitingForTheSlowOne() {
        List<Mono<String>> calls = List.of(
                Mono.just("a"), Mono.just("slow").delayElement(Duration.ofSeconds(5)), Mono.just("c").delayElement(Duration.ofMillis(50)));
        long started = System.nanoTime();
        List<String> answers = firstAcks("GET", calls, 2, Duration.ofSeconds(10)).block();
        assertThat(answers).containsExactly("a", "c");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void failsAsSoonAsQuorumIsImpossible() {
        List<Mono<String>> calls = List.of(
                Mono.error(new IllegalStateException("down")), Mono.error(new IllegalStateException("down")), Mono.never());
        long started = System.nanoTime();
        assertThatThrownBy(() -> firstAcks("PUT", calls, 2, Duration.ofSeconds(10)).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> {
                    assertThat(e.required()).isEqualTo(2);
                    assertThat(e.succeeded()).isZero();
                    assertThat(e.failed()).isEqualTo(2);
                    assertThat(e.asked()).isEqualTo(3);
                    assertThat(e.getMessage()).isEqualTo("PUT: 2 acks required, but only 0 of 3 replicas succeeded (2 failed)");
                });
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("not waiting for the timeout").isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void oneFailureIsToleratedWhenAckIsStillReachable() {
        List<Mono<String>> calls = List.of(Mono.error(new IllegalStateException("down")), Mono.just("b"), Mono.just("c"));
        assertThat(firstAcks("GET", calls, 2, TIMEOUT).block()).containsExactlyInAnyOrder("b", "c");
    }

    @Test
    void aCallThatCompletesEmptyCountsAsAFailure() {
        List<Mono<String>> calls = List.of(Mono.empty(), Mono.empty(), Mono.just("c"));
        assertThatThrownBy(() -> firstAcks("GET", calls, 2, TIMEOUT).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> assertThat(e.failed()).isEqualTo(2));
        assertThat(firstAcks("GET", List.of(Mono.<String>empty(), Mono.just("b")), 1, TIMEOUT).block())
                .containsExactly("b");
    }

    @Test
    void failsAtTheTimeoutWhenRepliesDoNotCome() {
        List<Mono<String>> calls = List.of(Mono.just("a"), Mono.never(), Mono.never());
        assertThatThrownBy(() -> firstAcks("GET", calls, 2, Duration.ofMillis(200)).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> {
                    assertThat(e.succeeded()).isEqualTo(1);
                    assertThat(e.getMessage()).contains("the rest timed out");
                });
    }

    @Test
    void aCallNoLongerNeededRunsToCompletionAndIsNotCancelled() throws InterruptedException {
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean completed = new AtomicBoolean();
        Mono<String> slow = Mono.just("slow").delayElement(Duration.ofMillis(300))
                .doOnCancel(() -> cancelled.set(true))
                .doOnSuccess(v -> completed.set(true));
        List<String> answers = firstAcks("PUT", List.of(Mono.just("a"), slow), 1, TIMEOUT).block();
        assertThat(answers).containsExactly("a");
        Thread.sleep(600);
        assertThat(cancelled).as("slow call cancelled").isFalse();
        assertThat(completed).as("slow call completed").isTrue();
    }

    @Test
    void eachSubscriptionStartsTheCallsAgain() {
        int[] subscriptions = {0};
        Mono<String> call = Mono.fromCallable(() -> "x" + ++subscriptions[0]);
        Mono<List<String>> quorum = firstAcks("GET", List.of(call), 1, TIMEOUT);
        assertThat(subscriptions[0]).as("cold until subscribed").isZero();
        assertThat(quorum.block()).containsExactly("x1");
        assertThat(quorum.block()).containsExactly("x2");
    }

    @Test
    void aWriteWaitsPastTheTimeoutForItsLocalCallWhenThatAloneCompletesTheQuorum() {
        Mono<String> slowLocal = Mono.just("local").delayElement(Duration.ofMillis(600));
        long started = System.nanoTime();
        awaitAcks("PUT", List.of(slowLocal, Mono.just("b"), Mono.<String>never()), 0, 2,
                Duration.ofMillis(100)).block(Duration.ofSeconds(10));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
    }

    @Test
    void aSlowLocalCallDoesNotHideMissingPeersAtTheTimeout() {
        Mono<String> slowLocal = Mono.just("local").delayElement(Duration.ofSeconds(5));
        long started = System.nanoTime();
        assertThatThrownBy(() -> awaitAcks("PUT", List.of(slowLocal, Mono.<String>never(),
                Mono.<String>never()), 0, 2, Duration.ofMillis(200)).block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(QuorumNotReachedException.class,
                        e -> assertThat(e.getMessage()).contains("the rest timed out"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void aLocalCallThatFailsOrLandsShortOfTheQuorumPastTheTimeoutFailsAtOnce() {
        Mono<String> failingLocal = Mono.<String>error(new IllegalStateException("disk")).delaySubscription(Duration.ofMillis(400));
        assertThatThrownBy(() -> awaitAcks("PUT", List.of(failingLocal), 0, 1, Duration.ofMillis(100))
                .block(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> assertThat(e.failed()).isEqualTo(1));

        Mono<String> slowLocal = Mono.just("local").delayElement(Duration.ofMillis(400));
        Mono<String> lateRemoteFailure = Mono.<String>error(new IllegalStateException("down")).delaySubscription(Duration.ofMillis(200));
        assertThatThrownBy(() -> awaitAcks("PUT", List.of(slowLocal, lateRemoteFailure,
                Mono.just("c")), 0, 3, Duration.ofMillis(100)).block(Duration.ofSeconds(10)))
                .as("3/3 with one peer failed: impossible, whatever the local call does")
                .isInstanceOf(QuorumNotReachedException.class);
    }

    @Test
    void withoutALocalCallTheTimeoutDecidesAsBefore() {
        Mono<String> slow = Mono.just("slow").delayElement(Duration.ofSeconds(5));
        assertThatThrownBy(() -> awaitAcks("PUT", List.of(slow), -1, 1, Duration.ofMillis(100))
                .block(Duration.ofSeconds(10)))
                .isInstanceOf(QuorumNotReachedException.class);
        assertThatThrownBy(() -> awaitAcks("PUT", List.of(slow), -1, 2, Duration.ofMillis(100)))
                .as("more acks than replicas")
                .isInstanceOf(IllegalArgumentException.class);
    }
}
