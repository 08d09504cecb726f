package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.DhtApplication;
import dev.dht.testing.ClusterTls;
import dev.dht.testing.DhtClient;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A wrong {@code dht.*} setting stops {@link SpringApplication} start-up with an {@link InvalidSettingException}
 * naming it; a valid single node without a cluster secret starts.
 */
class InvalidSettingsTest {
    private static final String SELF = "http://localhost:7001";
    private static final String SECRET = "--dht.cluster-secret=s";

    @TempDir
    Path tempDir;

    /** The arguments of a single node at {@link #SELF} followed by {@code settings}. */
    private static List<String> alone(String... settings) {
        List<String> arguments = new ArrayList<>(List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF));
        arguments.addAll(List.of(settings));
        return arguments;
    }

    static Stream<Arguments> wrongSettings() {
        return Stream.of(
                Arguments.of("a joiner without a secret", "dht.cluster-secret",
                        List.of("--dht.self=" + SELF, "--dht.nodes=http://localhost:7002")),
                Arguments.of("duplicate node", "dht.nodes",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",http://localhost:7002," + SELF, SECRET)),
                Arguments.of("self without scheme", "dht.self",
                        List.of("--dht.self=localhost:8080", "--dht.nodes=localhost:8080")),
                Arguments.of("self with a path", "dht.self",
                        List.of("--dht.self=http://h:8080/path", "--dht.nodes=http://h:8080/path")),
                Arguments.of("node without scheme", "dht.nodes",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",localhost:8080", SECRET)),
                Arguments.of("node with a path", "dht.nodes",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",http://h:8080/path", SECRET)),
                Arguments.of("node without port", "dht.nodes",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",http://h", SECRET)),
                Arguments.of("node with another scheme", "dht.nodes",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",ftp://h:21", SECRET)),
                Arguments.of("several nodes without secret", "dht.cluster-secret",
                        List.of("--dht.self=" + SELF, "--dht.nodes=" + SELF + ",http://localhost:7002")),
                Arguments.of("rebuild accepting a missing member that is no URL", "dht.rebuild.accept-missing",
                        alone("--dht.rebuild.accept-missing=localhost:7002")),
                Arguments.of("no storage thread", "dht.storage.threads",
                        alone("--dht.storage.threads=0")),
                Arguments.of("compaction nice above 19", "dht.storage.compaction-nice",
                        alone("--dht.storage.compaction-nice=20")),
                Arguments.of("memtable above 512MB", "dht.storage.write-buffer-size",
                        alone("--dht.storage.write-buffer-size=1GB")),
                Arguments.of("gc grace below the repair interval", "dht.tombstone.gc-grace",
                        alone("--dht.tombstone.gc-grace=30m",
                                "--dht.hints.window=10m", "--dht.repair.interval=1h")),
                Arguments.of("gc grace below the hint window", "dht.tombstone.gc-grace",
                        alone("--dht.tombstone.gc-grace=1h")),
                Arguments.of("negative tombstone GC interval", "dht.tombstone.gc-interval",
                        alone("--dht.tombstone.gc-interval=-1s")),
                Arguments.of("no tombstone purged per second", "dht.tombstone.gc-rate",
                        alone("--dht.tombstone.gc-rate=0")),
                Arguments.of("no hint replayed per second", "dht.hints.replay-rate",
                        alone("--dht.hints.replay-rate=0")),
                Arguments.of("negative repair interval", "dht.repair.interval",
                        alone("--dht.repair.interval=-1s")),
                Arguments.of("no repaired record per second", "dht.repair.max-rate",
                        alone("--dht.repair.max-rate=0")),
                Arguments.of("no scanned record per second", "dht.repair.scan-rate",
                        alone("--dht.repair.scan-rate=0")),
                Arguments.of("value size over what a backup holds", "dht.max-value-size",
                        alone("--dht.max-value-size=65MB")),
                Arguments.of("no body bytes in flight", "dht.max-in-flight-bytes",
                        alone("--dht.max-in-flight-bytes=0")),
                Arguments.of("body bytes in flight below the value size", "dht.max-in-flight-bytes",
                        alone("--dht.max-value-size=8MB",
                                "--dht.max-in-flight-bytes=4MB")),
                Arguments.of("zero event loop lag", "dht.max-event-loop-lag",
                        alone("--dht.max-event-loop-lag=0ms")),
                Arguments.of("zero queueing delay", "dht.max-queue-delay",
                        alone("--dht.max-queue-delay=0ms")),
                Arguments.of("speculative retry not before the timeout", "dht.speculative-retry-delay",
                        alone("--dht.replica-timeout=1s",
                                "--dht.speculative-retry-delay=1s")),
                Arguments.of("no replica write in flight", "dht.replica-writes-in-flight",
                        alone("--dht.replica-writes-in-flight=0")),
                Arguments.of("no replica read in flight", "dht.replica-reads-in-flight",
                        alone("--dht.replica-reads-in-flight=0")),
                Arguments.of("negative event loop threads", "dht.io-threads",
                        alone("--dht.io-threads=-1")),
                Arguments.of("TLS bundle that is not defined", "dht.tls.bundle",
                        List.of("--dht.self=https://localhost:7001", "--dht.nodes=https://localhost:7001",
                                "--dht.tls.bundle=nosuch")),
                Arguments.of("https nodes without TLS", "dht.nodes",
                        List.of("--dht.self=https://localhost:7001", "--dht.nodes=https://localhost:7001")),
                Arguments.of("http nodes with TLS", "dht.nodes",
                        alone("--dht.tls.bundle=nosuch")),
                Arguments.of("client certificates without TLS", "dht.tls.client-auth",
                        alone("--dht.tls.client-auth=need")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongSettings")
    void wrongSettingStopsStartUpNamingIt(String problem, String setting, List<String> arguments) {
        List<String> args = new ArrayList<>(arguments);
        args.add("--dht.data-dir=" + tempDir.resolve("data"));

        assertStartUpFailsNaming(setting, args);
    }

    @Test
    void theRebuildSwitchAndTheMembersARebuildMayMissBindSideBySide() {
        Binder binder = new Binder(new MapConfigurationPropertySource(Map.of("dht.rebuild", "true",
                "dht.rebuild.accept-missing", "http://a:1,http://b:2")));
        assertThat(binder.bind("dht.rebuild", Boolean.class).get()).isTrue();
        assertThat(binder.bind("dht.rebuild", RebuildProperties.class).get().acceptMissing())
                .containsExactly(URI.create("http://a:1"), URI.create("http://b:2"));
    }

    @Test
    void clientCertificatesWithoutATrustStoreStopStartUpNamingTheSetting() {
        ClusterTls tls = ClusterTls.create(tempDir.resolve("tls"));
        assertStartUpFailsNaming("dht.tls.client-auth", List.of("--dht.self=https://localhost:7001",
                "--dht.nodes=https://localhost:7001", "--dht.data-dir=" + tempDir.resolve("data"),
                "--spring.ssl.bundle.pem.dht.keystore.certificate=file:" + tls.certificateFile(),
                "--spring.ssl.bundle.pem.dht.keystore.private-key=file:" + tls.keyFile(),
                "--dht.tls.bundle=dht", "--dht.tls.client-auth=want"));
    }

    @Test
    void dataDirUnderARegularFileStopsStartUpNamingIt() throws Exception {
        Path regularFile = Files.writeString(tempDir.resolve("not-a-directory"), "x");

        assertStartUpFailsNaming("dht.data-dir",
                alone("--dht.data-dir=" + regularFile.resolve("data")));
    }

    @Test
    void dataDirThatIsARegularFileStopsStartUpNamingIt() throws Exception {
        Path regularFile = Files.writeString(tempDir.resolve("data-file"), "x");

        assertStartUpFailsNaming("dht.data-dir",
                alone("--dht.data-dir=" + regularFile));
    }

    @Test
    void singleNodeWithoutClusterSecretStartsAndServes() throws Exception {
        SpringApplication application = new SpringApplication(DhtApplication.class);
        try (ConfigurableApplicationContext context = application.run("--server.port=0", "--dht.self=" + SELF,
                "--dht.nodes=" + SELF, "--dht.data-dir=" + tempDir.resolve("data"))) {
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            HttpResponse<byte[]> status = new DhtClient(URI.create("http://localhost:" + port))
                    .send("GET", "/v0/status", new byte[0]);

            assertThat(context.isRunning()).isTrue();
            assertThat(status.statusCode()).isEqualTo(200);
            assertThat(context.getBean(DhtProperties.class).clusterSecret()).isEmpty();
            assertThat(context.getBean(AdmissionProperties.class).maxInFlightBytes().toBytes())
                    .as("default: a quarter of the heap, at least the 8 MB value size")
                    .isEqualTo(Math.max(Runtime.getRuntime().maxMemory() / 4, 8L * 1024 * 1024));
        }
    }

    private static void assertStartUpFailsNaming(String setting, List<String> args) {
        List<String> all = new ArrayList<>(args);
        all.add("--server.port=0");
        SpringApplication application = new SpringApplication(DhtApplication.class);

        assertThatThrownBy(() -> application.run(all.toArray(String[]::new)).close())
                .satisfies(failure -> {
                    InvalidSettingException invalid = invalidSettingIn(failure);
                    assertThat(invalid).as("InvalidSettingException in the cause chain of %s", failure).isNotNull();
                    assertThat(invalid.setting()).isEqualTo(setting);
                    assertThat(invalid.getMessage()).startsWith(setting + ": ");
                });
    }

    private static InvalidSettingException invalidSettingIn(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InvalidSettingException invalid) {
                return invalid;
            }
        }
        return null;
    }
}
