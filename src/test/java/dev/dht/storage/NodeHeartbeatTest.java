package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.config.InvalidSettingException;
import dev.dht.testing.SettableClock;
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

    @Test
    void aNewNodeStartsAndWritesItsHeartbeat() {
        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();

        assertThat(dataDir.resolve(NodeHeartbeat.FILE_NAME)).exists();
        assertThat(dataDir.resolve(NodeHeartbeat.FILE_NAME + ".tmp")).doesNotExist();
    }

    @Test
    void aNodeDownForLessThanTheGraceStarts() {
        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();
        wall.advance(GRACE.minusMinutes(1));

        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();
    }

    @Test
    void aNodeDownForLongerThanTheGraceIsRefusedWithTheRebuildInstruction() {
        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();
        wall.advance(GRACE.plusMinutes(1));

        assertThatThrownBy(() -> NodeHeartbeat.open(dataDir, GRACE, false, wall))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("dht.tombstone.gc-grace (PT240H)")
                .hasMessageContaining("wipe its data directory " + dataDir.toAbsolutePath())
                .hasMessageContaining("--dht.rebuild=true");
    }

    @Test
    void theLastUpTimeIsTheLastHeartbeatNotTheStart() {
        NodeHeartbeat heartbeat = NodeHeartbeat.open(dataDir, GRACE, false, wall);
        wall.advance(GRACE.plusDays(1));
        heartbeat.beat();
        wall.advance(Duration.ofHours(1));

        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();
    }

    @Test
    void aRebuildStartsWhateverTheHeartbeatSays() {
        NodeHeartbeat.open(dataDir, GRACE, false, wall).close();
        wall.advance(GRACE.multipliedBy(3));

        NodeHeartbeat.open(dataDir, GRACE, true, wall).close();
    }

    @Test
    void aNodeRestartedWithItsWallClockBackStampsAboveWhatItHandedOut() {
        NodeHeartbeat first = NodeHeartbeat.open(dataDir, GRACE, false, wall);
        long acknowledged = 0;
        for (int i = 0; i < 1000; i++) {
            acknowledged = first.clock().now();
        }
        // killed: no close, so no last heartbeat; the file is the one open wrote (the node stopped within a beat)
        wall.advance(Duration.ofMinutes(-5));

        NodeHeartbeat restarted = NodeHeartbeat.open(dataDir, GRACE, false, wall);

        assertThat(restarted.clock().now()).isGreaterThan(acknowledged);
        restarted.close();
    }

    @Test
    void theHighWaterMarkStaysAheadOfAClockThatRanOnBetweenBeats() {
        NodeHeartbeat first = NodeHeartbeat.open(dataDir, GRACE, false, wall);
        wall.advance(NodeHeartbeat.MARGIN.minusMillis(1));
        long acknowledged = first.clock().now();
        wall.set(1_600_000_000_000L);

        NodeHeartbeat restarted = NodeHeartbeat.open(dataDir, GRACE, false, wall);

        assertThat(restarted.clock().now()).isGreaterThan(acknowledged);
        restarted.close();
    }

    @Test
    void aDamagedHeartbeatStopsTheStart() throws Exception {
        Files.writeString(dataDir.resolve(NodeHeartbeat.FILE_NAME), "garbage\n");

        assertThatThrownBy(() -> NodeHeartbeat.open(dataDir, GRACE, false, wall))
                .hasMessageContaining("cannot read heartbeat");
    }
}
