package dev.dht.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.testing.SettableClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The heartbeat file across restarts, with a wall clock the test sets: a node down longer than the grace is
 * refused, and a node restarted with its wall clock set back still stamps above what it handed out before.
 */
class NodeHeartbeatTest {
    private static final Duration GRACE = Duration.ofDays(10);

    @TempDir
    Path dataDir;

    private final SettableClock wall = new SettableClock(1_700_000_000_000L);

    /** A heartbeat opened and started, as a node that came up. */
    private NodeHeartbeat started() {
        NodeHeartbeat heartbeat = NodeHeartbeat.open(dataDir, GRACE, false, wall);
        heartbeat.start();
        return heartbeat;
    }

    @Test
    void aNewNodeStartsAndWritesItsHeartbeat() {
        started().close();

        assertThat(dataDir.resolve(NodeHeartbeat.FILE_NAME)).exists();
        assertThat(dataDir.resolve(NodeHeartbeat.FILE_NAME + ".tmp")).doesNotExist();
    }

    @Test
    void aNodeDownForLessThanTheGraceStarts() throws IOException {
        started().close();
        wall.advance(GRACE.minusMinutes(1));

        NodeHeartbeat restarted = started();

        assertThat(lastUpMillis()).as("up again now").isEqualTo(wall.millis());
        assertThat(HybridLogicalClock.millisOf(restarted.clock().now())).isEqualTo(wall.millis());
        restarted.close();
    }

    @Test
    void aNodeDownForLongerThanTheGraceIsRefusedWithTheRebuildInstruction() {
        started().close();
        wall.advance(GRACE.plusMinutes(1));

        assertThatThrownBy(() -> NodeHeartbeat.open(dataDir, GRACE, false, wall))
                .isInstanceOf(NodeHeartbeat.DownTooLongException.class)
                .hasMessageContaining("dht.tombstone.gc-grace (PT240H)")
                .hasMessageContaining("wipe its data directory " + dataDir.toAbsolutePath())
                .hasMessageContaining("--dht.rebuild=true");
    }

    @Test
    void theLastUpTimeIsTheLastHeartbeatNotTheStart() throws IOException {
        NodeHeartbeat heartbeat = started();
        wall.advance(GRACE.plusDays(1)); // up all this time
        heartbeat.close(); // its last beat
        assertThat(lastUpMillis()).as("last up at the last beat").isEqualTo(wall.millis());
        wall.advance(Duration.ofHours(1));

        NodeHeartbeat restarted = started(); // down an hour, not the grace and a day since its start

        assertThat(lastUpMillis()).isEqualTo(wall.millis());
        restarted.close();
    }

    @Test
    void aRebuildStartsWhateverTheHeartbeatSays() throws IOException {
        started().close();
        wall.advance(GRACE.multipliedBy(3));

        NodeHeartbeat rebuilding = NodeHeartbeat.open(dataDir, GRACE, true, wall);
        rebuilding.start();

        assertThat(HybridLogicalClock.millisOf(rebuilding.clock().now())).isEqualTo(wall.millis());
        assertThat(lastUpMillis()).as("counts as up once started").isEqualTo(wall.millis());
        rebuilding.close();
    }

    @Test
    void aNodeRestartedWithItsWallClockBackStampsAboveWhatItHandedOut() {
        NodeHeartbeat first = started();
        long acknowledged = 0;
        for (int i = 0; i < 1000; i++) {
            acknowledged = first.clock().now();
        }
        // killed: no close, so no last heartbeat; the file is the one open wrote (the node stopped within a beat)
        wall.advance(Duration.ofMinutes(-5));

        NodeHeartbeat restarted = NodeHeartbeat.open(dataDir, GRACE, false, wall);

        assertThat(restarted.clock().now()).isGreaterThan(acknowledged);
        restarted.close();
        first.close();
    }

    @Test
    void theHighWaterMarkStaysAheadOfAClockThatRanOnBetweenBeats() {
        NodeHeartbeat first = started();
        wall.advance(NodeHeartbeat.MARGIN.minusMillis(1));
        long acknowledged = first.clock().now();
        wall.set(1_600_000_000_000L);

        NodeHeartbeat restarted = NodeHeartbeat.open(dataDir, GRACE, false, wall);

        assertThat(restarted.clock().now()).isGreaterThan(acknowledged);
        restarted.close();
        first.close();
    }

    @Test
    void aNodeRestartedAfterACleanShutdownStartsAtItsWallClockNotAMarginAhead() {
        NodeHeartbeat first = started();
        long acknowledged = 0;
        for (int i = 0; i < 1000; i++) {
            acknowledged = first.clock().now();
        }
        first.close();
        wall.advance(Duration.ofSeconds(1));

        long restartedStamp = NodeHeartbeat.open(dataDir, GRACE, false, wall).clock().now();

        assertThat(restartedStamp).isGreaterThan(acknowledged);
        assertThat(HybridLogicalClock.millisOf(restartedStamp)).as("no jump ahead of the wall clock")
                .isEqualTo(wall.millis());
    }

    @Test
    void aNodeRestartedAfterACleanShutdownWithItsWallClockBackStampsAboveWhatItHandedOut() {
        NodeHeartbeat first = started();
        long acknowledged = first.clock().now();
        first.close();
        wall.advance(Duration.ofMinutes(-5));

        assertThat(NodeHeartbeat.open(dataDir, GRACE, false, wall).clock().now()).isGreaterThan(acknowledged);
    }

    @Test
    void aNodeKilledAndRestartedOnceTheMarginPassedStartsAtItsWallClock() {
        NodeHeartbeat first = started();
        first.beat();
        long acknowledged = first.clock().now();
        // killed: no close; the restart comes more than the margin after the last heartbeat
        wall.advance(NodeHeartbeat.MARGIN.plusSeconds(1));

        long restartedStamp = NodeHeartbeat.open(dataDir, GRACE, false, wall).clock().now();

        assertThat(restartedStamp).isGreaterThan(acknowledged);
        assertThat(HybridLogicalClock.millisOf(restartedStamp)).isEqualTo(wall.millis());
        first.close();
    }

    @Test
    void aNodeKilledAndRestartedWithinTheMarginStartsAboveTheHighWaterMark() {
        NodeHeartbeat first = started();
        long acknowledged = first.clock().now();
        wall.advance(Duration.ofSeconds(2));

        long restartedStamp = NodeHeartbeat.open(dataDir, GRACE, false, wall).clock().now();

        assertThat(restartedStamp).isGreaterThan(acknowledged);
        assertThat(HybridLogicalClock.millisOf(restartedStamp)).as("above the mark, the margin ahead of the last beat")
                .isGreaterThanOrEqualTo(wall.millis() - 2000 + NodeHeartbeat.MARGIN.toMillis());
        first.close();
    }

    @Test
    void aStartThatFailedDoesNotCountAsUp() {
        started().close();
        wall.advance(GRACE.minusMinutes(1));
        NodeHeartbeat.open(dataDir, GRACE, false, wall).close(); // the rest of the start-up failed: never started
        wall.advance(Duration.ofMinutes(2));

        assertThatThrownBy(() -> NodeHeartbeat.open(dataDir, GRACE, false, wall))
                .hasMessageContaining("--dht.rebuild=true");
    }

    /** The {@code last-up-millis} the heartbeat file holds now. */
    private long lastUpMillis() throws IOException {
        return Files.readAllLines(dataDir.resolve(NodeHeartbeat.FILE_NAME)).stream()
                .filter(line -> line.startsWith("last-up-millis "))
                .mapToLong(line -> Long.parseLong(line.substring("last-up-millis ".length())))
                .findFirst().orElseThrow();
    }

    @Test
    void aDamagedHeartbeatStopsTheStart() throws Exception {
        Files.writeString(dataDir.resolve(NodeHeartbeat.FILE_NAME), "garbage\n");

        assertThatThrownBy(() -> NodeHeartbeat.open(dataDir, GRACE, false, wall))
                .hasMessageContaining("cannot read heartbeat");
    }
}
