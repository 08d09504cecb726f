package dev.dht;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The training run that {@code ./mvnw package} and the image build record their class data sharing archive from: a
 * wrong answer makes it fail (exit 1), which fails the build instead of archiving a start that did not work. (Its
 * success, exit 0, is what every {@code package} checks: the build fails without it.)
 */
class TrainingRunTest {

    @Test
    void aWrongAnswerFailsTheRun(@TempDir Path dataDir) {
        // every training PUT is larger than 4 bytes, so it answers 413 instead of 201
        ConfigurableApplicationContext node = start(dataDir);

        assertThat(TrainingRun.run(node)).isEqualTo(1);
        assertThat(node.isActive()).isFalse();
    }

    private static ConfigurableApplicationContext start(Path dataDir) {
        return new SpringApplicationBuilder(DhtApplication.class).run(
                "--server.port=0",
                "--dht.self=http://localhost:18080",
                "--dht.data-dir=" + dataDir,
                "--dht.max-value-size=4B",
                "--spring.lifecycle.timeout-per-shutdown-phase=2s");
    }
}
