package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.DhtApplication;
import dev.dht.testing.DhtClient;
import io.netty.channel.EventLoopGroup;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * {@code dht.io-threads} sets how many Netty event loops a node runs (web server and replica client alike); by
 * default one per available processor.
 */
class EventLoopThreadsTest {
    private static final String SELF = "http://localhost:7001";

    @TempDir
    Path tempDir;

    @Test
    void aSetNumberOfEventLoopsServes() {
        assertThat(eventLoopsOfNodeStartedWith("--dht.io-threads=3")).isEqualTo(3);
    }

    @Test
    void byDefaultOneEventLoopPerProcessor() {
        assertThat(eventLoopsOfNodeStartedWith()).isEqualTo(Runtime.getRuntime().availableProcessors());
    }

    /** Starts a single node with {@code settings}, checks that it serves, and returns its event loop count. */
    private long eventLoopsOfNodeStartedWith(String... settings) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--dht.self=" + SELF, "--dht.nodes=" + SELF,
                "--dht.data-dir=" + tempDir.resolve("data")));
        args.addAll(List.of(settings));
        try (ConfigurableApplicationContext context = new SpringApplication(DhtApplication.class).run(args.toArray(String[]::new))) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            DhtClient client = new DhtClient(URI.create("http://localhost:" + port));
            assertThat(client.send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
            EventLoopGroup loops = context.getBean(ReactorResourceFactory.class).getLoopResources().onServer(true);
            return StreamSupport.stream(loops.spliterator(), false).count();
        }
    }
}
