package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.NodeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar target/dht.jar} with a wrong setting exits non-zero with a short report that names the setting
 * and holds no stack trace.
 */
class InvalidSettingReportIT {
    @TempDir
    Path tempDir;

    @Test
    void duplicateNodeIsReportedByNameWithoutAStackTrace() throws Exception {
        int port = NodeProcess.freePort();
        String self = "http://localhost:" + port;

        String output = runUntilExit(port, tempDir.resolve("data"), "--dht.nodes=" + self + "," + self);

        assertThat(output).contains("APPLICATION FAILED TO START", "Invalid setting dht.nodes: lists " + self + " twice",
                "--dht.nodes=", "DHT_NODES");
    }

    @Test
    void dataDirUnderARegularFileIsReportedByNameWithoutAStackTrace() throws Exception {
        Path regularFile = Files.writeString(tempDir.resolve("not-a-directory"), "x");

        String output = runUntilExit(NodeProcess.freePort(), regularFile.resolve("data"));

        assertThat(output).contains("APPLICATION FAILED TO START", "Invalid setting dht.data-dir", "DHT_DATA_DIR");
    }

    @Test
    void malformedSelfUrlIsReportedByNameWithoutAStackTrace() throws Exception {
        String output = runUntilExit(NodeProcess.freePort(), tempDir.resolve("data"),
                "--dht.self=localhost:8080", "--dht.nodes=localhost:8080");

        assertThat(output)
                .contains("APPLICATION FAILED TO START", "Invalid setting dht.self", "localhost:8080", "DHT_SELF");
    }

    /** Runs the jar, requires a non-zero exit and no stack-trace line; returns its output. */
    private String runUntilExit(int port, Path dataDir, String... args) throws Exception {
        Path log = tempDir.resolve("node-" + port + ".log");
        try (NodeProcess node = NodeProcess.start(port, dataDir, log, List.of("-Xmx128m"), args)) {
            int exit = node.awaitExit(Duration.ofSeconds(120));
            String output = node.output();
            assertThat(exit).as("exit code; output:%n%s", output).isNotZero();
            assertThat(output.lines()).as("stack trace lines in:%n%s", output).noneMatch(line -> line.startsWith("\tat "));
            return output;
        }
    }
}
