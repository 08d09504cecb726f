package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** Quorum waiting with no sockets: replica calls are plain Monos that succeed, fail, are slow or never answer. */
class QuorumCollectorTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Test
    void completesWithTheFirstAckSuccessesWithoutWaitingForTheSlowOne() {
        List<Mono<String>> calls = List.of(
                Mono.just("a"), Mono.just("slow").delayElement(Duration.ofSeconds(5)), Mono.just("c").delayElement(Duration.ofMillis(50)));
        long started = System.nanoTime();
        List<String> answers = QuorumCollector.firstAcks("GET", calls, 2, Duration.ofSeconds(10)).block();
        assertThat(answers).containsExactly("a", "c");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void failsAsSoonAsQuorumIsImpossible() {
        List<Mono<String>> calls = List.of(
                Mono.error(new IllegalStateException("down")), Mono.error(new IllegalStateException("down")), Mono.never());
        long started = System.nanoTime();
        assertThatThrownBy(() -> QuorumCollector.firstAcks("PUT", calls, 2, Duration.ofSeconds(10)).block())
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
        assertThat(QuorumCollector.firstAcks("GET", calls, 2, TIMEOUT).block()).containsExactlyInAnyOrder("b", "c");
    }

    @Test
    void aCallThatCompletesEmptyCountsAsAFailure() {
        List<Mono<String>> calls = List.of(Mono.empty(), Mono.empty(), Mono.just("c"));
        assertThatThrownBy(() -> QuorumCollector.firstAcks("GET", calls, 2, TIMEOUT).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> assertThat(e.failed()).isEqualTo(2));
        assertThat(QuorumCollector.firstAcks("GET", List.of(Mono.<String>empty(), Mono.just("b")), 1, TIMEOUT).block())
                .containsExactly("b");
    }

    @Test
    void failsAtTheTimeoutWhenRepliesDoNotCome() {
        List<Mono<String>> calls = List.of(Mono.just("a"), Mono.never(), Mono.never());
        assertThatThrownBy(() -> QuorumCollector.firstAcks("GET", calls, 2, Duration.ofMillis(200)).block())
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
        List<String> answers = QuorumCollector.firstAcks("PUT", List.of(Mono.just("a"), slow), 1, TIMEOUT).block();
        assertThat(answers).containsExactly("a");
        Thread.sleep(600);
        assertThat(cancelled).as("slow call cancelled").isFalse();
        assertThat(completed).as("slow call completed").isTrue();
    }

    @Test
    void eachSubscriptionStartsTheCallsAgain() {
        int[] subscriptions = {0};
        Mono<String> call = Mono.fromCallable(() -> "x" + ++subscriptions[0]);
        Mono<List<String>> quorum = QuorumCollector.firstAcks("GET", List.of(call), 1, TIMEOUT);
        assertThat(subscriptions[0]).as("cold until subscribed").isZero();
        assertThat(quorum.block()).containsExactly("x1");
        assertThat(quorum.block()).containsExactly("x2");
    }

    @Test
    void onAnEventLoopTheTimeoutFiresOnThatLoopAndAQuorumDecidedFirstCancelsItsTimer() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            QuorumTimers timers = QuorumTimers.onLoopsOf(group);
            AtomicReference<String> failedOn = new AtomicReference<>();
            CompletableFuture<Throwable> timedOut = new CompletableFuture<>();
            group.execute(() -> QuorumCollector.firstAcks("GET", List.of(Mono.<String>never()), 1, Duration.ofMillis(100), timers)
                    .subscribe(ok -> { }, error -> {
                        failedOn.set(Thread.currentThread().getName());
                        timedOut.complete(error);
                    }));
            assertThat(timedOut.get(5, TimeUnit.SECONDS)).isInstanceOf(QuorumNotReachedException.class)
                    .hasMessageContaining("timed out");
            AtomicReference<String> loopName = new AtomicReference<>();
            group.submit(() -> loopName.set(Thread.currentThread().getName())).get(5, TimeUnit.SECONDS);
            assertThat(failedOn.get()).as("the timeout ran on the loop that started the quorum").isEqualTo(loopName.get());

            AtomicInteger outcomes = new AtomicInteger();
            CompletableFuture<List<String>> answered = new CompletableFuture<>();
            group.execute(() -> QuorumCollector.firstAcks("GET", List.of(Mono.just("a")), 1, Duration.ofMillis(100), timers)
                    .subscribe(answers -> {
                        outcomes.incrementAndGet();
                        answered.complete(answers);
                    }, error -> outcomes.incrementAndGet()));
            assertThat(answered.get(5, TimeUnit.SECONDS)).containsExactly("a");
            Thread.sleep(300);
            assertThat(outcomes).as("no second outcome after the timeout's due time").hasValue(1);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void offTheLoopsTheTimersRunOnTheParallelScheduler() {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            QuorumTimers timers = QuorumTimers.onLoopsOf(group);
            AtomicReference<String> failedOn = new AtomicReference<>();
            assertThatThrownBy(() -> QuorumCollector.firstAcks("GET", List.of(Mono.<String>never()), 1, Duration.ofMillis(100), timers)
                    .doOnError(error -> failedOn.set(Thread.currentThread().getName()))
                    .block())
                    .isInstanceOf(QuorumNotReachedException.class);
            assertThat(failedOn.get()).startsWith("parallel-");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
