package dev.dht.fault;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.repair.AntiEntropyRepair;
import dev.dht.repair.RepairResult;
import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

/**
 * Clock skew of one node: node 0's wall clock runs 5 s ahead of, or 5 s behind, the other two
 * nodes' (an offset {@link Clock} injected into its hybrid logical clock). Conflicts are settled by last write
 * wins on the coordinators' HLC timestamps (as in Cassandra), so:
 * <ul>
 *   <li>a write the later coordinator has not seen yet wins over that coordinator's later writes for up to the
 *       skew when its coordinator's clock is ahead (when the later coordinator's clock is behind): the later write
 *       is acknowledged and lost. The test asserts the loss for every later write whose whole request lies
 *       inside the skew window and the win for every one wholly after it, and measures the window;</li>
 *   <li>a coordinator that has stored a write (as a replica) never stamps lower than it (the HLC receive rule),
 *       so alternating writes each acknowledged by all 3 replicas lose nothing, whatever the skew;</li>
 *   <li>after repair every replica holds the same record of every key.</li>
 * </ul>
 * Node 1 is kept from seeing node 0's writes (or the reverse) by answering 503 to those replica calls, hints off.
 * Figures go to RELIABILITY.md's "Faults" table ({@link ReliabilityReport}, {@code faults-clock-skew.md}).
 */
class ClockSkewIT {
    private static final long SKEW_MILLIS = 5_000;
    private static final long STEP_MILLIS = 400;
    private static final int WINDOW_KEYS = 21; // later writes 0 to 8 s after the earlier one
    private static final int ALTERNATING_WRITES = 40;
    /** Rounding between the test's reading of the system clock and the nodes'. */
    private static final long SLACK_MILLIS = 20;
    private static final Duration REPAIR_TIMEOUT = Duration.ofMinutes(2);
    private static final Map<String, String> FIGURES = new TreeMap<>();

    @TempDir
    Path root;
    /** Started by each test with its settings; closed after it, before the temp dir is deleted. */
    @AutoClose
    private InProcessCluster cluster;

    @AfterAll
    static void report() {
        if (FIGURES.size() == 2) {
            ReliabilityReport.row("clock-skew", "clock skew of one node (+5 s, -5 s; in-process 3-node cluster)",
                    String.join("; ", FIGURES.values()),
                    "lost exactly the later writes inside the skew window; 0 lost when the later coordinator had "
                            + "stored the earlier write; replicas identical after repair");
        }
    }

    @Test
    void aNodeAheadWinsOverLaterWritesOfNodesThatHaveNotSeenItsWriteForUpToTheSkew() throws InterruptedException {
        runCase("node 0 +5 s", SKEW_MILLIS, 0, 1);
    }

    @Test
    void aNodeBehindLosesToEarlierWritesItHasNotSeenForUpToTheSkew() throws InterruptedException {
        runCase("node 0 -5 s", -SKEW_MILLIS, 1, 0);
    }

    /**
     * @param skew    node 0's clock offset, ms
     * @param earlier the coordinator of the earlier writes
     * @param later   the coordinator of the later writes, kept from seeing the earlier ones
     */
    private void runCase(String name, long skew, int earlier, int later) throws InterruptedException {
        cluster = InProcessCluster.start(3, root, Map.of(
                "dht.hints.enabled", "false",
                "dht.hints.window", "0s",
                "dht.repair.interval", "0s",
                "dht.replica-timeout", "10s"),
                node -> node == 0 ? Clock.offset(Clock.systemUTC(), Duration.ofMillis(skew)) : null);
        long skewOfEarlier = earlier == 0 ? skew : 0;
        long skewOfLater = later == 0 ? skew : 0;

        // 1. The later coordinator has not seen the earlier write: the skew window.
        cluster.faults(earlier).answerCallsTo(cluster.url(later), HttpStatus.SERVICE_UNAVAILABLE);
        long[] earlierSent = new long[WINDOW_KEYS];
        long[] earlierAcked = new long[WINDOW_KEYS];
        for (int i = 0; i < WINDOW_KEYS; i++) {
            earlierSent[i] = System.currentTimeMillis();
            assertThat(cluster.client(earlier).put(windowKey(i), "earlier", "2/3")).isEqualTo(201);
            earlierAcked[i] = System.currentTimeMillis();
        }
        long[] laterSent = new long[WINDOW_KEYS];
        long[] laterAcked = new long[WINDOW_KEYS];
        for (int i = 0; i < WINDOW_KEYS; i++) {
            long due = earlierAcked[i] + i * STEP_MILLIS;
            while (System.currentTimeMillis() < due) {
                Thread.sleep(Math.max(1, due - System.currentTimeMillis()));
            }
            laterSent[i] = System.currentTimeMillis();
            assertThat(cluster.client(later).put(windowKey(i), "later", "2/3"))
                    .as("the later write is acknowledged").isEqualTo(201);
            laterAcked[i] = System.currentTimeMillis();
        }
        cluster.faults(earlier).clear();

        // 2. Every later write by a coordinator that stored the earlier one (as a replica, 3/3) wins.
        int lostAfterSeen = 0;
        String seenKey = "skew-seen";
        for (int i = 0; i < ALTERNATING_WRITES; i++) {
            int coordinator = i % 2 == 0 ? earlier : later;
            assertThat(cluster.client(coordinator).put(seenKey, "write " + i, "3/3")).isEqualTo(201);
            if (!text(cluster.client(2).get(seenKey, "3/3").body()).equals("write " + i)) {
                lostAfterSeen++;
            }
        }

        // 3. Alternating quorum writes (2/3), no faults: a loss needs the next coordinator not to hold the write yet.
        int lostAtQuorum = 0;
        for (int i = 0; i < ALTERNATING_WRITES; i++) {
            assertThat(cluster.client(earlier).put(quorumKey(i), "earlier", "2/3")).isEqualTo(201);
            assertThat(cluster.client(later).put(quorumKey(i), "later", "2/3")).isEqualTo(201);
        }

        repairEverywhere();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < WINDOW_KEYS; i++) {
            keys.add(windowKey(i));
        }
        for (int i = 0; i < ALTERNATING_WRITES; i++) {
            keys.add(quorumKey(i));
        }
        keys.add(seenKey);
        for (String key : keys) {
            Record onNode0 = cluster.storedAt(0, key);
            assertThat(onNode0).as("%s on node 0", key).isNotNull();
            assertThat(cluster.storedAt(1, key)).as("%s: replicas converged", key).isEqualTo(onNode0);
            assertThat(cluster.storedAt(2, key)).as("%s: replicas converged", key).isEqualTo(onNode0);
        }
        for (int i = 0; i < ALTERNATING_WRITES; i++) {
            if (text(cluster.storedAt(2, quorumKey(i)).value()).equals("earlier")) {
                lostAtQuorum++;
            }
        }

        int lost = 0;
        long longestLostGap = -1;
        long shortestWonGap = Long.MAX_VALUE;
        for (int i = 0; i < WINDOW_KEYS; i++) {
            boolean laterLost = text(cluster.storedAt(2, windowKey(i)).value()).equals("earlier");
            // The earlier stamp is at least its sending time on its clock, the later at most its ack time on its own.
            boolean mustLose = laterAcked[i] + skewOfLater + SLACK_MILLIS < earlierSent[i] + skewOfEarlier;
            boolean mustWin = laterSent[i] + skewOfLater > earlierAcked[i] + skewOfEarlier + SLACK_MILLIS;
            long gap = laterSent[i] - earlierAcked[i];
            if (mustLose) {
                assertThat(laterLost).as("the later write %d ms after the earlier one lost", gap).isTrue();
            }
            if (mustWin) {
                assertThat(laterLost).as("the later write %d ms after the earlier one won", gap).isFalse();
            }
            if (laterLost) {
                lost++;
                longestLostGap = Math.max(longestLostGap, gap);
            } else {
                shortestWonGap = Math.min(shortestWonGap, gap);
            }
        }
        assertThat(lost).as("later writes within the skew lost").isGreaterThan(0);
        assertThat(lostAfterSeen).as("writes lost by a coordinator that had stored the one before").isZero();

        String figures = name + ": " + lost + " of " + WINDOW_KEYS + " later writes (0-"
                + (WINDOW_KEYS - 1) * STEP_MILLIS / 1000 + " s after, by a node that had not seen the earlier) lost,"
                + " longest lost gap " + longestLostGap + " ms, shortest won gap " + shortestWonGap + " ms; "
                + lostAfterSeen + " of " + ALTERNATING_WRITES + " alternating 3/3 writes lost; " + lostAtQuorum
                + " of " + ALTERNATING_WRITES + " back-to-back 2/3 pairs lost the second write";
        System.out.println("[clock-skew] " + figures);
        synchronized (FIGURES) {
            FIGURES.put(name, figures);
        }
    }

    private void repairEverywhere() {
        for (int node = 0; node < 3; node++) {
            List<RepairResult> results = cluster.bean(node, AntiEntropyRepair.class).repairAll().block(REPAIR_TIMEOUT);
            assertThat(results).hasSize(2).allSatisfy(result -> assertThat(result.error()).isNull());
        }
    }

    private static String windowKey(int i) {
        return "skew-window-" + i;
    }

    private static String quorumKey(int i) {
        return "skew-quorum-" + i;
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
