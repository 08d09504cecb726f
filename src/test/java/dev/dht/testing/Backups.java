package dev.dht.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cli.CliContext;
import dev.dht.cli.Dht;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * Cluster backups as an operator runs them, for tests: {@code POST /actuator/backup}, waiting on
 * {@code GET /actuator/backups/{id}} for its end, and the {@code restore} command run in this JVM with its output
 * captured.
 */
public final class Backups {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a backup request may take to be answered: its I/O waits for the backup threads, on a busy machine. */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
    /** How long a refused (503/504) request is sent again, and the pause before each new attempt. */
    private static final Duration RETRY_TIME = Duration.ofSeconds(30);
    private static final Duration RETRY_PAUSE = Duration.ofMillis(100);

    private Backups() {
    }

    /**
     * Sends a request again while it is answered 503 or 504, as a client honouring Retry-After does on a busy
     * machine (a 503 stored nothing; a 504 may have, and the same value is stored again), then checks the answer is
     * {@code expected}. Gives up 30 s after the first refusal. The first attempt runs on the calling thread; only a
     * refused one starts the poll (Awaitility evaluates on a thread of its own per await, which at tens of thousands
     * of requests cost more than the requests).
     */
    public static void untilAnswered(IntSupplier request, int expected, String what) {
        int status = untilAnswered(request::getAsInt, Integer::intValue);
        assertThat(status).as(what).isEqualTo(expected);
    }

    /**
     * {@code GET id} at {@code replicas} through {@code client}, sent again while it is answered 503 or 504 (for 30 s
     * after the first refusal; the first attempt on the calling thread, as {@link #untilAnswered}).
     */
    public static HttpResponse<byte[]> readUntilAnswered(DhtClient client, String id, String replicas) {
        return untilAnswered(() -> client.get(id, replicas), HttpResponse::statusCode);
    }

    /** {@code request}'s first answer whose {@code status} is neither 503 nor 504 (see {@link #untilAnswered}). */
    private static <T> T untilAnswered(Supplier<T> request, ToIntFunction<T> status) {
        T answer = request.get();
        if (!overloadedOrLate(status.applyAsInt(answer))) {
            return answer;
        }
        return await().atMost(RETRY_TIME).pollDelay(RETRY_PAUSE).pollInterval(RETRY_PAUSE)
                .until(request::get, again -> !overloadedOrLate(status.applyAsInt(again)));
    }

    private static boolean overloadedOrLate(int status) {
        return status == 503 || status == 504;
    }

    /**
     * Writes key {@code key-i} of the backup tests' data set through {@code client}: i % 10 == 0 written then
     * deleted, 1 written with a 1 s TTL (expired by the time a restore runs), 2 with an hour's TTL, the rest plain
     * values ({@link #value}); odd keys at 1/1 (one copy), even ones at the default 2/3. Overloaded or late answers
     * are sent again ({@link #untilAnswered}).
     */
    public static void writeKey(DhtClient client, int i) {
        String id = "key-" + i;
        String replicas = i % 2 == 1 ? "1/1" : null;
        String query = "/v0/entity?id=" + id + (replicas == null ? "" : "&replicas=" + replicas);
        String ttl = i % 10 == 1 ? "&ttl=1" : i % 10 == 2 ? "&ttl=3600" : "";
        byte[] value = value(i).getBytes(StandardCharsets.UTF_8);
        untilAnswered(() -> client.send("PUT", query + ttl, value).statusCode(), 201, "PUT " + id);
        if (i % 10 == 0) {
            untilAnswered(() -> client.delete(id, replicas), 202, "DELETE " + id);
        }
    }

    /** The value {@link #writeKey} writes to {@code key-i}: 8 to about 110 bytes. */
    public static String value(int i) {
        return "value-" + i + "-" + "x".repeat(i % 97);
    }

    /**
     * Key {@code key-i} of {@link #writeKey} reads as written at 2/3 through {@code client}, or 404 if deleted or
     * expired.
     */
    public static void assertRestored(DhtClient client, int i) {
        HttpResponse<byte[]> read = readUntilAnswered(client, "key-" + i, "2/3");
        if (i % 10 == 0 || i % 10 == 1) {
            assertThat(read.statusCode()).as("key-%d (deleted or expired)", i).isEqualTo(404);
        } else {
            assertThat(read.statusCode()).as("key-%d", i).isEqualTo(200);
            assertThat(new String(read.body(), StandardCharsets.UTF_8)).as("key-%d", i).isEqualTo(value(i));
        }
    }

    /** The exit status and output of one run of the restore command. */
    public record RestoreRun(int status, String out, String err) {
    }

    /** {@code POST /actuator/backup} on {@code client}'s node with the test secret; returns the backup id (202). */
    public static String start(DhtClient client, boolean allowMissing) {
        HttpResponse<byte[]> response = client.admin("/actuator/backup",
                allowMissing ? "{\"allowMissing\": true}" : null, InProcessCluster.SECRET, ANSWER_TIMEOUT);
        assertThat(response.statusCode()).as("POST /actuator/backup: %s", body(response)).isEqualTo(202);
        return json(response).get("id").asText();
    }

    /**
     * {@code POST /actuator/backup} with {@code {"incremental": true}} on {@code client}'s node; returns the answer
     * (202): its {@code id}, and its {@code base} or {@code fullReason}.
     */
    public static JsonNode startIncremental(DhtClient client) {
        HttpResponse<byte[]> response = client.admin("/actuator/backup", "{\"incremental\": true}",
                InProcessCluster.SECRET, ANSWER_TIMEOUT);
        assertThat(response.statusCode()).as("POST /actuator/backup: %s", body(response)).isEqualTo(202);
        return json(response);
    }

    /** Waits until backup {@code id} is no longer running; returns {@code GET /actuator/backups/{id}}. */
    public static JsonNode awaitEnd(DhtClient client, String id, Duration timeout) {
        return await().atMost(timeout).pollInterval(Duration.ofMillis(200))
                .until(() -> get(client, id), backup -> backup != null && !"running".equals(backup.get("state").asText()));
    }

    /** {@code GET /actuator/backups/{id}}, null on 404. */
    public static JsonNode get(DhtClient client, String id) {
        HttpResponse<byte[]> response = client.send("GET", "/actuator/backups/" + id, new byte[0], ANSWER_TIMEOUT);
        if (response.statusCode() == 404) {
            return null;
        }
        assertThat(response.statusCode()).as("GET /actuator/backups/%s: %s", id, body(response)).isEqualTo(200);
        return json(response);
    }

    /** {@code GET /actuator/backups}. */
    public static JsonNode list(DhtClient client) {
        HttpResponse<byte[]> response = client.send("GET", "/actuator/backups", new byte[0], ANSWER_TIMEOUT);
        assertThat(response.statusCode()).isEqualTo(200);
        return json(response);
    }

    /** Runs {@code dht restore ARGS} in this JVM with the test secret in its environment. */
    public static RestoreRun restore(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] command = new String[args.length + 1];
        command[0] = "restore";
        System.arraycopy(args, 0, command, 1, args.length);
        int status = Dht.run(command, new CliContext(Map.of("DHT_CLUSTER_SECRET", InProcessCluster.SECRET),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                false, Path.of("")));
        return new RestoreRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static JsonNode json(HttpResponse<byte[]> response) {
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String body(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
