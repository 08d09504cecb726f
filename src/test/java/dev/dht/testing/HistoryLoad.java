package dev.dht.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A steady load of writes, deletes and reads over a cluster's nodes whose every answer is checked against each key's
 * {@link KeyHistory}: a writer per node it is given at first, each the only writer of its keys ({@code PREFIX pW-*}
 * preloaded, {@code PREFIX nW-*} added as it goes), so that each key's writes are ordered; readers through the nodes
 * of {@link #readThrough} check each read against what was acknowledged before it started. One key in six is written
 * at 1/1, one at 3/3, the others at 2/3; reads of a key use its writes' setting. A 503 is tolerated (counted), a 504
 * at 1/1 or 3/3 (at 2/3 too after {@link #tolerateUnavailable}) and a 400 for a {@code from} larger than the cluster
 * too; anything else unexpected (a 2/3 request with no answer or a 504, a stale read) is a failure. Runs on its own
 * threads; blocking HTTP.
 */
public final class HistoryLoad implements AutoCloseable {
    /** Keys each writer writes before the load, the last {@link #COLD} of which the load then leaves alone. */
    private static final int PRELOAD = 400;
    private static final int COLD = 100;
    /** New keys each writer adds during the load, at most. */
    private static final int FRESH = 400;
    private static final int WRITE_PAUSE_MS = 15;
    private static final int READ_PAUSE_MS = 8;
    private static final int READERS = 3;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** Every key written, preloaded or added by the load. */
    public final List<KeyHistory> keys = new CopyOnWriteArrayList<>();
    /** Writes and deletes acknowledged during the load. */
    public final LongAdder acknowledged = new LongAdder();
    /** Reads that answered 200 or 404 and were checked. */
    public final LongAdder readsChecked = new LongAdder();
    /** 504s at 1/1 and 3/3, and at 2/3 after {@link #tolerateUnavailable} (before it, those at 2/3 are failures). */
    public final LongAdder timeouts = new LongAdder();
    /** 400s of a request whose {@code from} exceeds the members (a cluster down to 2 members refuses 2/3). */
    public final LongAdder tooFewMembers = new LongAdder();
    /** 503s by {@code X-Dht-Overload-Reason}. */
    public final Map<String, AtomicInteger> overloaded = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final AtomicInteger failureCount = new AtomicInteger();
    private final String prefix;
    private final int writers;
    private final List<List<KeyHistory>> writable = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    /** Requests of the load's threads in flight, counted before they look at the nodes to send through. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean singleCopiesMayBeLost;
    private volatile boolean unavailableTolerated;
    private volatile List<URI> writeThrough;
    private volatile List<URI> readThrough;

    /**
     * @param prefix begins every key's id, so that loads one after the other on one cluster do not share keys
     * @param nodes  a writer per node, each writing through its own; reads through all of them
     */
    public HistoryLoad(String prefix, List<URI> nodes) {
        this.prefix = prefix;
        this.writers = nodes.size();
        this.writeThrough = List.copyOf(nodes);
        this.readThrough = List.copyOf(nodes);
        for (int w = 0; w < writers; w++) {
            writable.add(new ArrayList<>());
        }
    }

    /** From now on, reads go through {@code nodes}. */
    public void readThrough(List<URI> nodes) {
        readThrough = List.copyOf(nodes);
    }

    /** From now on, writer W writes through node {@code W mod nodes.size()} of {@code nodes}. */
    public void writeThrough(List<URI> nodes) {
        writeThrough = List.copyOf(nodes);
    }

    /**
     * Sends nothing more through {@code node} (reads or writes) and waits a second for the requests in flight
     * through it to end: before the test kills or freezes it.
     */
    public void avoid(URI node) throws InterruptedException {
        writeThrough(writeThrough.stream().filter(url -> !url.equals(node)).toList());
        readThrough(readThrough.stream().filter(url -> !url.equals(node)).toList());
        Thread.sleep(1_000);
    }

    /**
     * Sends nothing more through any node and waits until no request of the load is in flight (at most a minute):
     * before every node is killed. {@link #writeThrough} and {@link #readThrough} give the load nodes again.
     */
    public void idle() {
        writeThrough(List.of());
        readThrough(List.of());
        await("the load's requests in flight ended").atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofMillis(20)).until(() -> inFlight.get() == 0);
    }

    /**
     * From now on, keys written at 1/1 are not checked (reads of them only need an answer): a node killed for good or
     * back on an empty disk took with it the one copy a 1/1 write asked for.
     */
    public void singleCopiesMayBeLost() {
        singleCopiesMayBeLost = true;
    }

    /**
     * From now on a 504 at 2/3 is counted in {@link #timeouts}, not a failure: for a test whose faults may take two
     * replicas of a key away at once (a node removed while another is frozen or restarting). A 504 write is not
     * acknowledged and may or may not have been applied; the history checks what was acknowledged, not availability.
     */
    public void tolerateUnavailable() {
        unavailableTolerated = true;
    }

    private boolean unchecked(KeyHistory key) {
        return singleCopiesMayBeLost && key.from() == 1;
    }

    /**
     * {@link #PRELOAD} keys per writer, one in ten deleted again, every write acknowledged (503s and 504s sent
     * again: the load checks what is acknowledged, the preload only fills the store).
     */
    public void preload() throws Exception {
        List<Future<?>> done = new ArrayList<>();
        ExecutorService preloaders = Executors.newFixedThreadPool(writers);
        try {
            for (int w = 0; w < writers; w++) {
                int writer = w;
                done.add(preloaders.submit(() -> {
                    for (int i = 0; i < PRELOAD; i++) {
                        KeyHistory key = new KeyHistory(prefix + "p" + writer + "-" + i, replicasOf(i),
                                i >= PRELOAD - COLD);
                        preload(key, writer, false);
                        if (i % 10 == 5) {
                            preload(key, writer, true);
                        }
                        keys.add(key);
                        if (!key.cold()) {
                            writable.get(writer).add(key);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> writer : done) {
                writer.get();
            }
        } finally {
            preloaders.shutdownNow();
        }
    }

    private void preload(KeyHistory key, int writer, boolean delete) throws IOException, InterruptedException {
        int version = key.issue(delete);
        HttpResponse<String> response = send(delete ? "DELETE" : "PUT", through(writer), key,
                delete ? null : key.value(version));
        for (int tries = 0; response.statusCode() == 504 && tries < 5; tries++) { // a node still warming up
            response = send(delete ? "DELETE" : "PUT", through(writer), key, delete ? null : key.value(version));
        }
        assertThat(response.statusCode()).as("preload %s of %s: %s", delete ? "DELETE" : "PUT", key.id(),
                response.body()).isEqualTo(delete ? 202 : 201);
        key.acknowledge(version);
    }

    /** Starts the writers and readers. */
    public void start() {
        for (int w = 0; w < writers; w++) {
            int writer = w;
            threads.add(new Thread(() -> write(writer), "writer-" + w));
        }
        for (int r = 0; r < READERS; r++) {
            threads.add(new Thread(this::read, "reader-" + r));
        }
        for (Thread thread : threads) {
            thread.setDaemon(true);
            thread.setUncaughtExceptionHandler((dead, e) -> fail(dead.getName() + " died: " + e));
            thread.start();
        }
    }

    /** Stops the load and waits for its requests to end. */
    public void stop() throws InterruptedException {
        running.set(false);
        for (Thread thread : threads) {
            thread.join();
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How many failures the load saw. */
    public int failureCount() {
        return failureCount.get();
    }

    /** Asserts that the load saw no failure and did some work; prints its counts. */
    public void assertNoFailures(String scenario) {
        System.out.printf("%s: writes acknowledged %d, reads checked %d, 503s %s, 504s tolerated %d, 400s for"
                        + " too few members %d, keys %d%n", scenario, acknowledged.sum(), readsChecked.sum(), overloaded,
                timeouts.sum(), tooFewMembers.sum(), keys.size());
        assertThat(failureCount.get()).as("2/3 requests that failed, reads older than an acknowledged write,"
                + " unexpected answers: %s", failures).isZero();
        assertThat(acknowledged.sum()).as("writes acknowledged during the load").isGreaterThan(100);
        assertThat(readsChecked.sum()).as("reads checked during the load").isGreaterThan(100);
    }

    /**
     * Every key read once at its own {@code replicas} (or at {@code replicas} if not null), through {@code nodes} in
     * turn: what was acknowledged or newer (1/1 keys left out after {@link #singleCopiesMayBeLost}). After
     * {@link #tolerateUnavailable} a read answered 504 is sent again, up to 10 times, half a second apart.
     */
    public void assertEveryWriteReadable(List<URI> nodes, String replicas) throws Exception {
        ExecutorService readers = Executors.newFixedThreadPool(4);
        try {
            List<Future<String>> checked = new ArrayList<>();
            for (int n = 0; n < keys.size(); n++) {
                KeyHistory key = keys.get(n);
                if (key.acknowledged() == 0 || unchecked(key)) {
                    continue;
                }
                URI node = nodes.get(n % nodes.size());
                String setting = replicas == null ? key.replicas() : replicas;
                checked.add(readers.submit(() -> {
                    int acknowledgedBefore = key.acknowledged();
                    HttpResponse<String> read = send("GET", node, key.id(), setting, null);
                    for (int tries = 0; read.statusCode() == 504 && unavailableTolerated && tries < 10; tries++) {
                        Thread.sleep(500); // a read that timed out tells nothing: asked again
                        read = send("GET", node, key.id(), setting, null);
                    }
                    return read.statusCode() == 200 || read.statusCode() == 404
                            ? key.check(acknowledgedBefore, read.statusCode() == 200 ? key.version(read.body()) : -1)
                            : key.id() + " at " + setting + " through " + node + ": " + read.statusCode() + " "
                                    + read.body();
                }));
            }
            List<String> lost = new ArrayList<>();
            for (Future<String> result : checked) {
                if (result.get() != null) {
                    lost.add(result.get());
                }
            }
            assertThat(lost.size()).as("acknowledged writes not read back, of %d keys; the first: %s", keys.size(),
                    lost.subList(0, Math.min(20, lost.size()))).isZero();
        } finally {
            readers.shutdownNow();
        }
    }

    /** A request of the v0 API for {@code key} at its {@code replicas}; a 503 (overload) is sent again, up to 20 times. */
    public static HttpResponse<String> send(String method, URI node, KeyHistory key, String value)
            throws IOException, InterruptedException {
        return send(method, node, key.id(), key.replicas(), value);
    }

    /** A request of the v0 API at {@code replicas}; a 503 (overload) is sent again, up to 20 times. */
    public static HttpResponse<String> send(String method, URI node, String id, String replicas, String value)
            throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(V0Uri.raw(node.getPort(), "/v0/entity?id="
                        + V0Uri.percentEncode(id) + "&replicas=" + replicas)).timeout(Duration.ofSeconds(30))
                .method(method, value == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(value)).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        for (int tries = 0; response.statusCode() == 503 && tries < 20; tries++) {
            Thread.sleep(100);
            response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        }
        return response;
    }

    private URI through(int writer) {
        List<URI> nodes = writeThrough;
        return nodes.get(writer % nodes.size());
    }

    private void fail(String failure) {
        if (failureCount.incrementAndGet() <= 50) {
            failures.add(failure);
        }
    }

    private void write(int writer) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<KeyHistory> own = writable.get(writer);
        int fresh = 0;
        while (running.get()) {
            inFlight.incrementAndGet(); // before the nodes are read, so that idle() waits for this request
            try {
                List<URI> nodes = writeThrough;
                if (nodes.isEmpty()) {
                    continue;
                }
                int dice = random.nextInt(100);
                KeyHistory key;
                boolean delete = false;
                if (dice < 10 && fresh < FRESH) {
                    key = new KeyHistory(prefix + "n" + writer + "-" + fresh, replicasOf(fresh), false);
                    fresh++;
                    own.add(key);
                    keys.add(key);
                } else {
                    key = own.get(random.nextInt(own.size()));
                    delete = dice < 35;
                }
                int version = key.issue(delete);
                Answer answer = call(delete ? "DELETE" : "PUT", nodes.get(writer % nodes.size()), key,
                        delete ? null : key.value(version));
                if (answer.status() == (delete ? 202 : 201)) {
                    key.acknowledge(version);
                    acknowledged.increment();
                } else {
                    unexpected(answer, key, delete ? "DELETE" : "PUT");
                }
            } finally {
                inFlight.decrementAndGet();
                pause(WRITE_PAUSE_MS);
            }
        }
    }

    private void read() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (running.get()) {
            KeyHistory key = keys.get(random.nextInt(keys.size()));
            int before = key.acknowledged();
            if (before == 0) {
                continue;
            }
            inFlight.incrementAndGet(); // before the nodes are read, so that idle() waits for this request
            try {
                List<URI> nodes = readThrough;
                if (nodes.isEmpty()) {
                    continue;
                }
                Answer answer = call("GET", nodes.get(random.nextInt(nodes.size())), key, null);
                if (answer.status() == 200 || answer.status() == 404) {
                    String stale = key.check(before, answer.status() == 200 ? key.version(answer.body()) : -1);
                    if (stale != null && !unchecked(key)) {
                        fail("stale read through " + answer.node() + ": " + stale);
                    }
                    readsChecked.increment();
                } else {
                    unexpected(answer, key, "GET");
                }
            } finally {
                inFlight.decrementAndGet();
                pause(READ_PAUSE_MS);
            }
        }
    }

    /**
     * An answer that is not the success expected: a 503 (counted in {@link #overloaded}), a 504 at 1/1 or 3/3
     * (or at 2/3 after {@link #tolerateUnavailable}; counted) or a 400 for a {@code from} larger than the cluster (counted) is tolerated; anything else (a 504 at
     * 2/3, no answer, another status) is a failure.
     */
    private void unexpected(Answer answer, KeyHistory key, String method) {
        if (answer.status() == 503) {
            return;
        }
        if (answer.status() == 400 && answer.body().contains("exceeds the cluster size")) {
            tooFewMembers.increment();
            return;
        }
        if (answer.status() == 504 && (unavailableTolerated || !key.replicas().equals("2/3"))) {
            timeouts.increment();
            return;
        }
        fail(method + " " + key.id() + " at " + key.replicas() + " through " + answer.node() + ": "
                + (answer.status() == -1 ? "no answer, " : answer.status() + " ") + answer.body());
    }

    private Answer call(String method, URI node, KeyHistory key, String value) {
        URI uri = V0Uri.raw(node.getPort(), "/v0/entity?id=" + key.id() + "&replicas=" + key.replicas());
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                    .method(method, value == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(value)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 503) {
                String reason = response.headers().firstValue("X-Dht-Overload-Reason").orElse("none");
                overloaded.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
            }
            return new Answer(response.statusCode(), response.body(), node.getPort());
        } catch (IOException e) {
            return new Answer(-1, e.toString(), node.getPort());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(-1, e.toString(), node.getPort());
        }
    }

    private static void pause(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Answer(int status, String body, int node) {
    }

    private static String replicasOf(int i) {
        return i % 6 == 0 ? "1/1" : i % 6 == 1 ? "3/3" : "2/3";
    }
}
