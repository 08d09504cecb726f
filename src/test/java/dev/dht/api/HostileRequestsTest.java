package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.api.HostileRequests.Case;
import dev.dht.api.HostileRequests.Delivery;
import dev.dht.api.HostileRequests.Expect;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.RecordRepository;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SingleNodeTest;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The fault suite of hostile input: every case of {@link HostileRequests} goes to a real node (default settings but
 * a cluster secret and a 5-s idle timeout, so that slow clients are cut off in seconds) over a raw socket of its own.
 * Each must be answered as its case expects (a 4xx or a closed connection for the malformed ones) within
 * {@link #ANSWER_BOUND}, store nothing (no key with the cases' prefix in the node's store, checked after each case
 * and once more throughout the second after the last), log no error, and leave the node healthy
 * ({@code GET /v0/status} 200 and a normal PUT then GET of a fresh key). Each case prints one line of figures; the
 * table goes to {@code target/reliability/hostile-requests.md} (RELIABILITY.md, "Hostile input", holds a copy).
 */
@ExtendWith(OutputCaptureExtension.class)
@SingleNodeTest(properties = {"dht.cluster-secret=" + InProcessCluster.SECRET, "server.netty.idle-timeout=5s"})
class HostileRequestsTest {
    /** Longest a node may take to answer or close, after the last byte a case sends. */
    static final Duration ANSWER_BOUND = Duration.ofSeconds(15);
    /** Longest a slow client trickles its bytes before it falls silent. */
    static final Duration TRICKLE_LIMIT = Duration.ofSeconds(3);
    private static final int CLOSED = -1;
    private static final int NO_ANSWER = -2;

    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    @Test
    void everyHostileRequestIsRefusedStoresNothingAndLeavesTheNodeHealthy(CapturedOutput output) throws Exception {
        List<Case> cases = HostileRequests.all();
        List<String> rows = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            Case hostile = cases.get(i);
            long started = System.nanoTime();
            int status = send(hostile);
            long millis = (System.nanoTime() - started) / 1_000_000;
            String health = health("probe-" + i);
            List<String> stored = storedHostileKeys();
            boolean met = meets(hostile.expect(), status) && health.isEmpty() && stored.isEmpty();
            String row = String.format("| %d | %s | %s | %s | %d | %s |", i + 1, hostile.group(), hostile.name(),
                    answer(status), millis, met ? "yes" : "NO: " + (meets(hostile.expect(), status) ? "" : "expected "
                            + hostile.expect() + " ") + health + (stored.isEmpty() ? "" : " stored " + stored));
            System.out.println("hostile-request " + row);
            rows.add(row);
            if (!met) {
                failures.add(row);
            }
        }
        List<String> storedLate = storedHostileKeysWhileWatched(Duration.ofSeconds(1));
        writeTable(rows, cases.size() - failures.size(), storedLate);

        assertThat(cases).hasSizeGreaterThanOrEqualTo(60);
        assertThat(failures).as("cases not met").isEmpty();
        assertThat(storedLate).as("hostile keys stored in the second after the last case").isEmpty();
        assertThat(output.getOut().lines().filter(line -> line.contains(" ERROR ")))
                .as("errors logged while serving hostile requests").isEmpty();
    }

    /** Sends a case on a connection of its own; the status of the answer, {@link #CLOSED} or {@link #NO_ANSWER}. */
    private int send(Case hostile) throws Exception {
        try (RawHttpConnection connection = new RawHttpConnection(port, ANSWER_BOUND)) {
            try {
                if (hostile.delivery() == Delivery.TRICKLE || hostile.delivery() == Delivery.TRICKLE_BODY) {
                    int from = 0;
                    if (hostile.delivery() == Delivery.TRICKLE_BODY) {
                        from = new String(hostile.bytes(), StandardCharsets.ISO_8859_1).indexOf("\r\n\r\n") + 4;
                        connection.send(Arrays.copyOf(hostile.bytes(), from));
                    }
                    long until = System.nanoTime() + TRICKLE_LIMIT.toNanos();
                    for (int i = from; i < hostile.bytes().length && System.nanoTime() < until; i++) {
                        connection.send(new byte[] {hostile.bytes()[i]});
                        Thread.sleep(100);
                    }
                } else {
                    connection.send(hostile.bytes());
                    if (hostile.delivery() == Delivery.THEN_HALF_CLOSE) {
                        connection.shutdownOutput();
                    }
                }
            } catch (IOException e) {
                // the node closed the connection while the case was still sending: read what it answered, if anything
            }
            try {
                return connection.statusOrClosed();
            } catch (SocketTimeoutException e) {
                return NO_ANSWER;
            } catch (IOException e) {
                return CLOSED;
            }
        }
    }

    private static boolean meets(Expect expect, int status) {
        return switch (expect) {
            case REFUSED -> status == CLOSED || (status >= 400 && status < 500);
            case FORBIDDEN -> status == 403;
            case SERVED -> status == 200;
            case NOT_EXPOSED -> status == 400 || status == 404;
        };
    }

    private static String answer(int status) {
        return status == CLOSED ? "closed" : status == NO_ANSWER ? "no answer in " + ANSWER_BOUND.toSeconds() + " s"
                : String.valueOf(status);
    }

    /** Empty if the node is healthy: status 200, and a PUT then GET of {@code probe} round-trips; else what failed. */
    private String health(String probe) {
        DhtClient client = new DhtClient(URI.create("http://localhost:" + port));
        HttpResponse<byte[]> status = client.send("GET", "/v0/status", new byte[0]);
        if (status.statusCode() != 200) {
            return "status " + status.statusCode();
        }
        int put = client.put(probe, "value of " + probe, null);
        HttpResponse<byte[]> get = client.get(probe, null);
        if (put != 201 || get.statusCode() != 200
                || !new String(get.body(), StandardCharsets.UTF_8).equals("value of " + probe)) {
            return "probe PUT " + put + ", GET " + get.statusCode();
        }
        return "";
    }

    /** Keys with the hostile cases' prefix in the node's store (read from the repository directly). */
    private List<String> storedHostileKeys() {
        byte[] prefix = HostileRequests.ID_PREFIX.getBytes(StandardCharsets.UTF_8);
        byte[] end = prefix.clone();
        end[end.length - 1]++;
        List<String> keys = new ArrayList<>();
        try (RecordRepository.Cursor cursor = store.repository().range(prefix, end)) {
            while (cursor.hasNext()) {
                KeyedRecord entry = cursor.next();
                String key = new String(entry.key(), StandardCharsets.UTF_8);
                keys.add(key.length() > 40 ? key.substring(0, 40) + "..." : key);
            }
        }
        return keys;
    }

    /**
     * Watches the store for {@code watch} and returns the hostile keys it showed (none expected), for a write that
     * lands after its case was answered. Nothing stored is an absence, which cannot be awaited: Awaitility's
     * {@code during} has the store checked every 50 ms and requires it empty throughout, where a single look after
     * a fixed sleep would check one moment only.
     */
    private List<String> storedHostileKeysWhileWatched(Duration watch) {
        AtomicReference<List<String>> seen = new AtomicReference<>(List.of());
        try {
            await().during(watch).atMost(watch.multipliedBy(2)).pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        seen.set(storedHostileKeys());
                        return seen.get().isEmpty();
                    });
        } catch (ConditionTimeoutException stored) {
            // seen holds the keys; the test asserts on them after writing the table
        }
        return seen.get();
    }

    private void writeTable(List<String> rows, int met, List<String> storedLate) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(String.format("%d hostile requests, %d met (answered as expected within %d s, nothing stored, node"
                + " healthy after); hostile keys stored a second after the last case: %d.", rows.size(), met,
                ANSWER_BOUND.toSeconds(), storedLate.size()));
        lines.add("");
        lines.add("| # | group | case | answer | ms | met |");
        lines.add("|---|---|---|---|---|---|");
        lines.addAll(rows);
        Path table = Path.of("target", "reliability", "hostile-requests.md");
        Files.createDirectories(table.getParent());
        Files.write(table, lines);
    }
}
