package dev.dht.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.SettableClock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link HybridLogicalClock} over a wall clock the test sets: strictly increasing, never back, past observed remote
 * timestamps; how long until the wall clock leaves a timestamp's millisecond.
 */
class HybridLogicalClockTest {

    private final SettableClock wall = new SettableClock(1_700_000_000_000L);
    private final HybridLogicalClock clock = new HybridLogicalClock(wall);

    @Test
    void timestampCarriesTheWallClockMillis() {
        long timestamp = clock.now();

        assertThat(HybridLogicalClock.millisOf(timestamp)).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void nanosUntilTheWallClockLeavesATimestampsMillisecond() {
        long millis = HybridLogicalClock.millisOf(clock.now());

        assertThat(clock.nanosUntilAfter(millis)).as("a whole millisecond: the wall clock has no finer one")
                .isEqualTo(1_000_000);
        assertThat(clock.nanosUntilAfter(millis + 2)).isEqualTo(3_000_000);
        assertThat(clock.nanosUntilAfter(millis - 1)).as("already past").isZero();
        wall.advance(Duration.ofMillis(1));
        assertThat(clock.nanosUntilAfter(millis)).isZero();
    }

    @Test
    void strictlyIncreasingWhileTheWallClockStandsStill() {
        long previous = clock.now();
        for (int i = 0; i < 70_000; i++) {
            long next = clock.now();
            assertThat(next).isGreaterThan(previous);
            previous = next;
        }
    }

    @Test
    void neverGoesBackWhenTheWallClockStepsBack() {
        long beforeStep = clock.now();

        wall.set(1_700_000_000_000L - 3_600_000L);
        long afterStep = clock.now();

        assertThat(afterStep).isGreaterThan(beforeStep);
        assertThat(HybridLogicalClock.millisOf(afterStep)).isEqualTo(1_700_000_000_000L);
    }

    @Test
    void followsTheWallClockWhenItMovesForward() {
        clock.now();

        wall.set(1_700_000_000_500L);

        assertThat(HybridLogicalClock.millisOf(clock.now())).isEqualTo(1_700_000_000_500L);
    }

    @Test
    void observeMovesItPastARemoteTimestampFromTheFuture() {
        long remote = (1_700_000_000_000L + 60_000L) << 16 | 5;

        clock.observe(remote);

        assertThat(clock.now()).isGreaterThan(remote);
    }

    @Test
    void observingAnOlderTimestampDoesNotMoveItBack() {
        long local = clock.now();

        clock.observe(local - (1000L << 16));

        assertThat(clock.now()).isGreaterThan(local);
    }

    @Test
    void concurrentCallersGetDistinctTimestamps() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            Callable<long[]> task = () -> IntStream.range(0, 10_000).mapToLong(i -> clock.now()).toArray();
            List<Future<long[]>> results = threads.invokeAll(List.of(task, task, task, task));
            Set<Long> seen = new HashSet<>();
            for (Future<long[]> result : results) {
                for (long timestamp : result.get()) {
                    seen.add(timestamp);
                }
            }
            assertThat(seen).hasSize(40_000);
        } finally {
            threads.shutdownNow();
        }
    }
}
