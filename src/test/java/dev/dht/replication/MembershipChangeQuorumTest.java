package dev.dht.replication;

import static dev.dht.replication.ScriptedCalls.awaitAcksInBoth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A write while a key's replica set changes needs {@code ack} successes in the old set and in the new one
 * ({@link ReplicaPlan#forWrite(String, List, List, int, Duration)}): enough answers in one set alone do not do,
 * and a set that can no longer give {@code ack} fails the write at once. Replicas 0 to 3 stand for nodes A to D;
 * the old set is {A, B, C}, the new one {A, B, D} (D joins, C leaves).
 */
class MembershipChangeQuorumTest {
    private static final List<Integer> OLD = List.of(0, 1, 2);
    private static final List<Integer> NEW = List.of(0, 1, 3);
    private static final Duration TIMEOUT = Duration.ofMillis(300);

    @Test
    void aQuorumOfTheOldSetAloneIsNotEnough() {
        List<Mono<String>> calls = List.of(Mono.just("A"), Mono.never(), Mono.just("C"), Mono.never());

        assertThatThrownBy(() -> awaitAcksInBoth(calls, OLD, NEW, -1, 2, TIMEOUT).block(Duration.ofSeconds(10)))
                .as("A and C make 2 of the old set, the new set has only A")
                .isInstanceOfSatisfying(QuorumNotReachedException.class,
                        e -> assertThat(e.getMessage()).contains("the rest timed out"));
    }

    @Test
    void theWriteSucceedsOnceEachSetHasItsAcks() {
        List<Mono<String>> calls = List.of(Mono.just("A"), Mono.never(), Mono.just("C"),
                Mono.just("D").delayElement(Duration.ofMillis(100)));

        awaitAcksInBoth(calls, OLD, NEW, -1, 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
    }

    @Test
    void aReplicaInBothSetsCountsInBoth() {
        List<Mono<String>> calls = List.of(Mono.just("A"), Mono.just("B"), Mono.never(), Mono.never());

        awaitAcksInBoth(calls, OLD, NEW, -1, 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
    }

    @Test
    void aSetOutOfReachFailsTheWriteWithoutWaitingForTheTimeout() {
        List<Mono<String>> calls = List.of(Mono.just("A"), Mono.error(new IllegalStateException("B down")),
                Mono.never(), Mono.error(new IllegalStateException("D down")));

        assertThatThrownBy(() -> awaitAcksInBoth(calls, OLD, NEW, -1, 2, Duration.ofSeconds(30))
                .block(Duration.ofSeconds(5)))
                .as("the new set {A, B, D} lost B and D: 2 of it are out of reach")
                .isInstanceOfSatisfying(QuorumNotReachedException.class,
                        e -> assertThat(e.getMessage()).doesNotContain("timed out"));
    }

    @Test
    void atAckOneTheJoiningReplicaMustAnswerToo() {
        // old {A}, new {D}: a write acknowledged by A alone would be lost to reads of the new set
        List<Mono<String>> calls = List.of(Mono.just("A"), Mono.never(), Mono.never(), Mono.never());

        assertThatThrownBy(() -> awaitAcksInBoth(calls, List.of(0), List.of(3), -1, 1, TIMEOUT)
                .block(Duration.ofSeconds(10)))
                .isInstanceOf(QuorumNotReachedException.class);
    }

    @Test
    void theTimeoutWaitsForTheLocalWriteOnlyWhenItCompletesBothSets() {
        Mono<String> slowLocal = Mono.just("A").delayElement(Duration.ofMillis(600));
        List<Mono<String>> calls = List.of(slowLocal, Mono.just("B"), Mono.never(), Mono.never());
        awaitAcksInBoth(calls, OLD, NEW, 0, 2, Duration.ofMillis(100)).block(Duration.ofSeconds(10));

        List<Mono<String>> newSetShort = List.of(Mono.just("A").delayElement(Duration.ofMillis(600)), Mono.never(),
                Mono.just("C"), Mono.never());
        assertThatThrownBy(() -> awaitAcksInBoth(newSetShort, OLD, NEW, 0, 2, Duration.ofMillis(100))
                .block(Duration.ofSeconds(10)))
                .as("A would complete the old set with C, not the new one")
                .isInstanceOf(QuorumNotReachedException.class);
    }
}
