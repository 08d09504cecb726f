package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dht.config.InvalidSettingException;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TTL, tombstone GC and the refusal of a node down too long, on a real 3-node cluster over HTTP with a short
 * grace ({@value #GRACE_SECONDS} s; hints and scheduled repair are set to 0 so that the start-up check accepts it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DataLifecycleTest {
    private static final int GRACE_SECONDS = 3;
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3, Map.of(
            "dht.tombstone.gc-grace", GRACE_SECONDS + "s",
            "dht.tombstone.gc-interval", "500ms",
            "dht.hints.window", "0s",
            "dht.repair.interval", "0s")).restoredAfterEach();

    @Test
    void aValueWithATtlReadsUntilItExpiresThenIsAbsentEverywhere() throws InterruptedException {
        String prefix = "ttl-" + UUID.randomUUID() + "/";
        assertThat(put(0, prefix + "short", "gone soon", "ttl=2&replicas=3/3")).isEqualTo(201);
        assertThat(put(0, prefix + "long", "stays", "ttl=3600&replicas=3/3")).isEqualTo(201);
        assertThat(put(0, prefix + "forever", "stays", "replicas=3/3")).isEqualTo(201);

        awaitTrue("the short-lived value expires",
                () -> cluster.client(1).get(prefix + "short", "1/3").statusCode() == 404);

        for (int i = 0; i < 3; i++) {
            assertThat(cluster.client(i).get(prefix + "short", "3/3").statusCode()).isEqualTo(404);
            assertThat(cluster.client(i).get(prefix + "long", "3/3").statusCode()).isEqualTo(200);
        }
        assertThat(range(2, prefix)).as("an expired value is not in ranges")
                .isEqualTo(prefix + "forever\nstays" + prefix + "long\nstays");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ttl=0", "ttl=-1", "ttl=", "ttl=1.5", "ttl=abc", "ttl=315360001",
        "ttl=99999999999999999999"})
    void aTtlOutsideOneSecondToTenYearsIs400AndStoresNothing(String ttl) {
        String id = "bad-ttl-" + UUID.randomUUID();

        assertThat(put(0, id, "v", ttl)).isEqualTo(400);

        assertThat(cluster.client(0).get(id, "3/3").statusCode()).isEqualTo(404);
    }

    @Test
    void tenYearsIsTheLongestTtl() {
        assertThat(put(0, "ten-years-" + UUID.randomUUID(), "v", "ttl=315360000")).isEqualTo(201);
    }

    @Test
    void aTtlOnGetDeleteOrARangeIs400() {
        DhtClient client = cluster.client(0);
        assertThat(client.send("GET", "/v0/entity?id=k&ttl=10", new byte[0]).statusCode()).isEqualTo(400);
        assertThat(client.send("DELETE", "/v0/entity?id=k&ttl=10", new byte[0]).statusCode()).isEqualTo(400);
        assertThat(client.send("GET", "/v0/entities?start=a&ttl=10", new byte[0]).statusCode()).isEqualTo(400);
    }

    @Test
    void deletedKeysArePurgedFromEveryNodeAfterTheGraceAndDoNotComeBack() throws InterruptedException {
        String prefix = "purged-" + UUID.randomUUID() + "/";
        for (int k = 0; k < 20; k++) {
            assertThat(put(k % 3, prefix + k, "v" + k, "replicas=3/3")).isEqualTo(201);
            assertThat(cluster.client(k % 3).delete(prefix + k, "3/3")).isEqualTo(202);
        }
        assertThat(cluster.storedAt(0, prefix + 0).isTombstone()).isTrue();

        awaitTrue("every node purged the tombstones", () -> {
            for (int i = 0; i < 3; i++) {
                for (int k = 0; k < 20; k++) {
                    if (cluster.storedAt(i, prefix + k) != null) {
                        return false;
                    }
                }
            }
            return true;
        });

        for (int k = 0; k < 20; k++) {
            assertThat(cluster.client(k % 3).get(prefix + k, "3/3").statusCode()).isEqualTo(404);
        }
        assertThat(range(1, prefix)).isEmpty();
        for (int i = 0; i < 3; i++) {
            assertThat(cluster.storedAt(i, prefix + 0)).as("the reads repaired nothing back").isNull();
            assertThat(cluster.bean(i, MeterRegistry.class).get("dht.tombstone.purged").counter().count())
                    .isGreaterThanOrEqualTo(20);
        }
    }

    @Test
    void aNodeDownLongerThanTheGraceRefusesToStartAndSaysHowToRebuildIt() throws InterruptedException, IOException {
        cluster.stop(2);
        Thread.sleep(Duration.ofSeconds(GRACE_SECONDS + 1).toMillis());

        assertThatThrownBy(() -> cluster.start(2))
                .rootCause().isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("longer than dht.tombstone.gc-grace (PT" + GRACE_SECONDS + "S)")
                .hasMessageContaining("--dht.rebuild=true");

        wipe(cluster.dataDir(2)); // as the message says; dht.rebuild would then stream the node's data back
        cluster.start(2);
        assertThat(cluster.client(2).get("any", "1/3").statusCode()).isEqualTo(404);
    }

    private static void wipe(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }

    private int put(int node, String id, String value, String query) {
        return cluster.client(node).send("PUT", "/v0/entity?id=" + encode(id) + "&" + query,
                value.getBytes(StandardCharsets.UTF_8)).statusCode();
    }

    private String range(int node, String prefix) {
        String end = prefix.substring(0, prefix.length() - 1) + "0"; // '0' follows '/'
        HttpResponse<byte[]> response = cluster.client(node).send("GET",
                "/v0/entities?start=" + encode(prefix) + "&end=" + encode(end), new byte[0]);
        assertThat(response.statusCode()).isEqualTo(200);
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        await(what).atMost(DEADLINE).pollInterval(Duration.ofMillis(100)).until(condition::getAsBoolean);
    }
}
