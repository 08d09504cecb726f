package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Membership;
import dev.dht.membership.raft.ViewLog;
import dev.dht.testing.InProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * A new cluster is formed only once every founding member answers: two of three founding members on empty data
 * dirs, the third down, form nothing (their log could elect a leader, which waits); once the third is up the three
 * form it.
 */
class ClusterFormationTest {
    @TempDir
    Path dir;

    @Test
    void foundingMembersFormTheClusterOnlyOnceEveryOneAnswers() {
        try (InProcessCluster cluster = InProcessCluster.start(3, dir)) {
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
                assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(i).toFile())).isTrue();
            }
            cluster.start(0);
            cluster.start(1);
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < until) {
                for (int i = 0; i < 2; i++) {
                    assertThat(cluster.bean(i, ViewLog.class).view()).as("node %d's log while node 2 is down", i)
                            .isNull();
                }
                await().pollDelay(Duration.ofMillis(200)).until(() -> true);
            }

            cluster.start(2);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                for (int i = 0; i < 3; i++) {
                    assertThat(cluster.bean(i, Membership.class).epoch()).as("node %d's epoch", i).isEqualTo(1);
                    assertThat(cluster.bean(i, Membership.class).view().nodes()).hasSize(3);
                }
            });
            assertThat(cluster.client(0).put("formed", "yes", "3/3")).isEqualTo(201);
        }
    }
}
