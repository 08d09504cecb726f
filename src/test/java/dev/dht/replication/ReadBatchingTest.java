package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.storage.Record;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replica reads coalesced into batch requests, on a real 3-node cluster with one read request in flight per
 * peer: reads one at a time go alone, concurrent reads behind a slow peer travel together and each still gets
 * its own record or 404; the batch read endpoint answers each key, and refuses a malformed body with 400.
 */
class ReadBatchingTest {
    private static final int GETS = 24;

    // 5-s replica timeout: the 3/3 GETs wait for two slow rounds (300 ms each) one after the other; one read in
    // flight per peer is the default. The cluster is shared with WriteCoalescingTest (same settings).
    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.shared(3, Map.of("dht.replica-timeout", "5s"));

    @Test
    void readsOneAtATimeGoAloneAtOnce() {
        String prefix = "alone-" + UUID.randomUUID() + "-";
        for (int i = 0; i < 5; i++) {
            assertThat(cluster.client(0).put(prefix + i, "v" + i, "3/3")).isEqualTo(201);
        }
        long batchesBefore = calls(0, 1, "read-batch");
        long readsBefore = calls(0, 1, "read");
        for (int i = 0; i < 5; i++) {
            HttpResponse<byte[]> answer = cluster.client(0).get(prefix + i, "3/3");
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(new String(answer.body(), StandardCharsets.UTF_8)).isEqualTo("v" + i);
        }
        assertThat(calls(0, 1, "read") - readsBefore).as("single reads of node 1").isEqualTo(5);
        assertThat(calls(0, 1, "read-batch") - batchesBefore).as("batch reads of node 1").isZero();
    }

    @Test
    void concurrentReadsTravelTogetherAndEachGetsItsOwnAnswer() {
        String prefix = "batch-" + UUID.randomUUID() + "-";
        for (int i = 0; i < GETS; i += 2) { // odd keys are never written: each of them must be 404
            assertThat(cluster.client(0).put(prefix + i, "v" + i, "3/3")).isEqualTo(201);
        }
        cluster.faults(0).delayAnswersFrom(cluster.url(1), Duration.ofMillis(300));
        cluster.faults(0).delayAnswersFrom(cluster.url(2), Duration.ofMillis(300));
        List<HttpResponse<byte[]>> answers;
        try {
            answers = ConcurrentRequests.releasedTogether(GETS, i -> cluster.client(0).get(prefix + i, "3/3"));
        } finally {
            cluster.faults(0).clear();
        }

        for (int i = 0; i < GETS; i++) {
            HttpResponse<byte[]> answer = answers.get(i);
            if (i % 2 == 0) {
                assertThat(answer.statusCode()).as("key %d", i).isEqualTo(200);
                assertThat(new String(answer.body(), StandardCharsets.UTF_8)).as("key %d", i).isEqualTo("v" + i);
            } else {
                assertThat(answer.statusCode()).as("key %d", i).isEqualTo(404);
            }
        }
        DistributionSummary batches = cluster.bean(0, MeterRegistry.class).find("dht.replica.read.batch.records")
                .tag("peer", peer(1)).summary();
        assertThat(batches).as("read batches sent to node 1").isNotNull();
        assertThat(batches.max()).as("more than one key in a batch").isGreaterThan(1);
    }

    @Test
    void theBatchEndpointAnswersEachKeyInOrder() {
        String id = "direct-" + UUID.randomUUID();
        assertThat(cluster.client(1).put(id, "value", "3/3")).isEqualTo(201);
        List<byte[]> keys = List.of(bytes("missing-" + UUID.randomUUID()), bytes(id), bytes(id));

        HttpResponse<byte[]> answer = cluster.client(1).send("POST", InternalProtocol.READS_PATH,
                ReadBatchCodec.encodeKeys(keys), InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET);

        assertThat(answer.statusCode()).isEqualTo(200);
        List<Optional<Record>> records = ReadBatchCodec.decodeAnswers(answer.body(), keys.size(), "node 1");
        assertThat(records.get(0)).isEmpty();
        assertThat(records.get(1)).hasValueSatisfying(record ->
                assertThat(new String(record.value(), StandardCharsets.UTF_8)).isEqualTo("value"));
        assertThat(records.get(2)).isEqualTo(records.get(1));
    }

    @Test
    void malformedOrOversizedBatchReadsAre400() {
        byte[] body = ReadBatchCodec.encodeKeys(List.of(bytes("a"), bytes("b")));
        List<byte[]> tooMany = new ArrayList<>();
        for (int i = 0; i <= InternalProtocol.READ_BATCH_MAX_KEYS; i++) {
            tooMany.add(bytes("k" + i));
        }
        byte[] negative = body.clone();
        negative[3] = (byte) 0xf0; // first key length becomes negative
        negative[0] = (byte) 0x80;

        assertThat(post(Arrays.copyOf(body, body.length - 4))).as("no end marker").isEqualTo(400);
        assertThat(post(Arrays.copyOf(body, body.length + 1))).as("a byte after the end marker").isEqualTo(400);
        assertThat(post(negative)).as("negative key length").isEqualTo(400);
        assertThat(post(ReadBatchCodec.encodeKeys(List.of()))).as("no key").isEqualTo(400);
        assertThat(post(new byte[0])).as("empty body").isEqualTo(400);
        assertThat(post(ReadBatchCodec.encodeKeys(tooMany))).as("too many keys").isEqualTo(400);
        assertThat(post(new byte[InternalProtocol.BATCH_MAX_BYTES + 1])).as("too large").isEqualTo(413);
        assertThat(cluster.client(1).send("POST", InternalProtocol.READS_PATH, body).statusCode())
                .as("no cluster secret").isEqualTo(403);
        assertThat(post(body)).as("the well-formed body").isEqualTo(200);
    }

    private int post(byte[] body) {
        return cluster.client(1).send("POST", InternalProtocol.READS_PATH, body,
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET).statusCode();
    }

    private long calls(int node, int peer, String operation) {
        return cluster.bean(node, MeterRegistry.class).find("dht.replica.calls").tag("peer", peer(peer))
                .tag("operation", operation).timers().stream().mapToLong(Timer::count).sum();
    }

    private String peer(int node) {
        URI url = cluster.url(node);
        return url.getHost() + ":" + url.getPort();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
