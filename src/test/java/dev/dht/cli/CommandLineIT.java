package dev.dht.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.InProcessCluster;
import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator's way in: {@code bin/dht}, the wrapper script, runs the packaged jar as a process of its own (its
 * launcher, {@code DhtApplication}'s dispatch, no Spring context) against a live cluster; an unknown command exits 2
 * with the usage instead of starting a node.
 */
class CommandLineIT {
    @RegisterExtension
    static final InProcessCluster CLUSTER = InProcessCluster.of(3);

    /** What a process printed and its exit status. */
    record Run(int status, String out, String err) {
    }

    private static Run binDht(String... args) throws IOException, InterruptedException {
        NodeProcess.jar(); // fails with a clear message if the jar was not packaged
        List<String> command = new ArrayList<>(List.of("sh", Path.of("bin", "dht").toAbsolutePath().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("DHT_CLUSTER_SECRET", InProcessCluster.SECRET);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process process = builder.start();
        process.getOutputStream().close();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("bin/dht %s ended", List.of(args)).isTrue();
        return new Run(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void binDhtStatusListsEveryMemberAndAnUnknownCommandExits2() throws Exception {
        Run status = binDht("status", "--host", CLUSTER.url(1).toString());
        assertThat(status.status()).as("%s %s", status.out(), status.err()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(status.out()).containsPattern("(?m)^UP +NORMAL +" + CLUSTER.url(i) + " ");
        }

        Run unknown = binDht("stauts");
        assertThat(unknown.status()).as("%s %s", unknown.out(), unknown.err()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unmatched argument").contains("Usage: dht");
        assertThat(unknown.out()).as("no node started").doesNotContain("Netty started");
    }
}
