package dev.dht.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.testing.KeyHistory;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A steady load of PUTs and GETs at {@code replicas=2/3}, and a few DELETEs, through the nodes a Kubernetes Service
 * routes to: the nodes in rotation, in turn. A node leaves the rotation when it is told to stop (its endpoint is
 * removed on termination; {@link #leaveRotation} waits for the load's requests in flight through it, as the pod's
 * preStop sleep lets them end) and comes back once ready ({@link #rejoinRotation}). Each worker is the only writer of
 * its keys, so each key's writes are ordered ({@link KeyHistory}) and every read is checked against what was
 * acknowledged before it started. Every answer is counted by status and timed. A failure: an answer other than 2xx,
 * 404, 503 with {@code Retry-After} or 504, no answer at all (every request goes to a node in rotation), a stale read.
 * A 504 (too few replicas within {@code dht.replica-timeout}) is counted, and the caller decides about it. Runs on its
 * own threads, blocking HTTP; a worker sends at most one request per {@link #PERIOD}.
 */
final class ServiceRoutedLoad {
    private static final int WORKERS = 4;
    private static final int KEYS_PER_WORKER = 25;
    private static final Duration PERIOD = Duration.ofMillis(50);
    /** Above the nodes' replica timeout, so that a coordinator's own 504 is seen rather than this client's. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final String REPLICAS = "2/3";

    private final HttpClient http;
    /** Per node, the API's base URI as reached from here (https://host:port); it may change with a restart. */
    private final AtomicReferenceArray<URI> api;
    private final AtomicIntegerArray inFlight;
    private volatile List<Integer> rotation;
    private final List<List<KeyHistory>> keys = new ArrayList<>();
    private final Map<Integer, LongAdder> statuses = new ConcurrentSkipListMap<>();
    private final List<long[]> latencies = new ArrayList<>();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final AtomicInteger failureCount = new AtomicInteger();
    /** The first 504s, each with its time, request, node and the coordinator's message. */
    private final ConcurrentLinkedQueue<String> timeouts = new ConcurrentLinkedQueue<>();
    private final AtomicInteger timeoutCount = new AtomicInteger();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> workers = new ArrayList<>();
    private long startedNanos;
    private long stoppedNanos;

    /**
     * @param http   the client (trusting the cluster's CA)
     * @param api    per node, the API's base URI; all of them in rotation at first
     * @param prefix begins every key's id
     */
    ServiceRoutedLoad(HttpClient http, List<URI> api, String prefix) {
        this.http = http;
        this.api = new AtomicReferenceArray<>(api.toArray(URI[]::new));
        this.inFlight = new AtomicIntegerArray(api.size());
        this.rotation = IntStream.range(0, api.size()).boxed().toList();
        for (int w = 0; w < WORKERS; w++) {
            List<KeyHistory> own = new ArrayList<>();
            for (int k = 0; k < KEYS_PER_WORKER; k++) {
                own.add(new KeyHistory(prefix + "-w" + w + "-" + k, REPLICAS, false));
            }
            keys.add(own);
        }
    }

    /** Starts the workers. */
    void start() {
        startedNanos = System.nanoTime();
        for (int w = 0; w < WORKERS; w++) {
            int worker = w;
            Thread thread = new Thread(() -> work(worker), "service-load-" + w);
            thread.setDaemon(true);
            thread.setUncaughtExceptionHandler((dead, e) -> fail(dead.getName() + " died: " + e));
            workers.add(thread);
        }
        workers.forEach(Thread::start);
    }

    /** Stops the workers and waits for their last requests (at most {@link #REQUEST_TIMEOUT} each). */
    void stop() throws InterruptedException {
        running.set(false);
        for (Thread worker : workers) {
            worker.join();
        }
        stoppedNanos = System.nanoTime();
    }

    /**
     * Sends no new request through {@code node} and waits until those in flight through it have been answered (at
     * most 10 s, the pod's preStop sleep).
     */
    void leaveRotation(int node) {
        rotation = rotation.stream().filter(n -> n != node).toList();
        await("the load's requests through node " + node + " answered").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10)).until(() -> inFlight.get(node) == 0);
    }

    /** Sends through {@code node} again, at {@code api} (its API's base URI now). */
    void rejoinRotation(int node, URI api) {
        this.api.set(node, api);
        List<Integer> back = new ArrayList<>(rotation);
        back.add(node);
        back.sort(null);
        rotation = List.copyOf(back);
    }

    private void work(int worker) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<KeyHistory> own = keys.get(worker);
        long[] times = new long[1024];
        int count = 0;
        int turn = worker;
        while (running.get()) {
            long next = System.nanoTime() + PERIOD.toNanos();
            List<Integer> nodes = rotation;
            int node = nodes.get(turn++ % nodes.size());
            inFlight.incrementAndGet(node);
            try {
                if (!rotation.contains(node)) {
                    continue;   // it left between the two reads: a request now would go to a node told to stop
                }
                KeyHistory key = own.get(random.nextInt(own.size()));
                int dice = random.nextInt(100);
                String method = dice < 8 ? "DELETE" : dice < 54 ? "PUT" : "GET";
                long took = send(method, node, key);
                if (count == times.length) {
                    times = Arrays.copyOf(times, count * 2);
                }
                times[count++] = took;
            } finally {
                inFlight.decrementAndGet(node);
            }
            long rest = next - System.nanoTime();
            if (rest > 0) {
                try {
                    Thread.sleep(rest / 1_000_000, (int) (rest % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        synchronized (latencies) {
            latencies.add(Arrays.copyOf(times, count));
        }
    }

    /** Sends one request of {@code method} for {@code key} through {@code node}, checks its answer; the time it took, ns. */
    private long send(String method, int node, KeyHistory key) {
        boolean delete = method.equals("DELETE");
        int version = method.equals("GET") ? 0 : key.issue(delete);
        int acknowledgedBefore = key.acknowledged();
        HttpRequest request = HttpRequest.newBuilder(entity(api.get(node), key.id())).timeout(REQUEST_TIMEOUT)
                .method(method, method.equals("PUT") ? HttpRequest.BodyPublishers.ofString(key.value(version))
                        : HttpRequest.BodyPublishers.noBody()).build();
        long start = System.nanoTime();
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            long took = System.nanoTime() - start;
            statuses.computeIfAbsent(-1, s -> new LongAdder()).increment();
            fail(method + " " + key.id() + " through node " + node + " (in rotation): no answer after "
                    + took / 1_000_000 + " ms, " + e);
            return took;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return System.nanoTime() - start;
        }
        long took = System.nanoTime() - start;
        int status = response.statusCode();
        statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
        if (status == 503) {
            if (response.headers().firstValue("Retry-After").isEmpty()) {
                fail(method + " " + key.id() + " through node " + node + ": 503 without Retry-After, " + response.body());
            }
        } else if (method.equals("GET") && (status == 200 || status == 404)) {
            String stale = key.check(acknowledgedBefore, status == 200 ? key.version(response.body()) : -1);
            if (stale != null) {
                fail("stale read through node " + node + ": " + stale);
            }
        } else if (status == (delete ? 202 : 201) && !method.equals("GET")) {
            key.acknowledge(version);
        } else if (status == 504) {
            if (timeoutCount.incrementAndGet() <= 20) {
                timeouts.add(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " " + method + " through node " + node
                        + " after " + took / 1_000_000 + " ms: " + response.body().strip());
            }
        } else if (status / 100 != 2) {
            fail(method + " " + key.id() + " through node " + node + ": " + status + " after " + took / 1_000_000
                    + " ms, " + response.body());
        }
        return took;
    }

    private void fail(String failure) {
        if (failureCount.incrementAndGet() <= 20) {
            failures.add(Instant.now().truncatedTo(ChronoUnit.MILLIS) + " " + failure);
        }
    }

    /** The first 20 answers 504, each with its time (UTC), request, node and the coordinator's message. */
    List<String> timeouts() {
        return List.copyOf(timeouts);
    }

    /** Asserts that no answer failed (see the class's Javadoc) and that the load did some work. */
    void assertNoFailures() {
        assertThat(failureCount.get()).as("answers other than 2xx, 404, 503 with Retry-After or 504, requests with"
                + " no answer, stale reads; the first: %s", failures).isZero();
        assertThat(acknowledged()).as("writes and deletes acknowledged during the load").isGreaterThan(100);
    }

    /**
     * Every key written and acknowledged, read once at 2/3 through {@code api} in turn, once the load has stopped: its
     * last acknowledged value, or 404 if that was a delete (or a later write's, not acknowledged but perhaps
     * applied). A 503 with {@code Retry-After} is asked again after a second, up to 5 times.
     */
    void assertEveryAcknowledgedKeyReadsBack(List<URI> api) throws Exception {
        List<String> wrong = new ArrayList<>();
        int read = 0;
        for (KeyHistory key : keys.stream().flatMap(List::stream).toList()) {
            if (key.acknowledged() == 0) {
                continue;
            }
            URI node = api.get(read++ % api.size());
            HttpRequest request = HttpRequest.newBuilder(entity(node, key.id())).timeout(REQUEST_TIMEOUT).build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            for (int tries = 0; response.statusCode() == 503 && tries < 5; tries++) {
                Thread.sleep(1_000);
                response = http.send(request, HttpResponse.BodyHandlers.ofString());
            }
            int status = response.statusCode();
            String stale = status == 200 || status == 404
                    ? key.check(key.acknowledged(), status == 200 ? key.version(response.body()) : -1)
                    : key.id() + " through " + node + ": " + status + " " + response.body();
            if (stale != null) {
                wrong.add(stale);
            }
        }
        assertThat(read).as("keys acknowledged").isPositive();
        assertThat(wrong).as("of %d keys read back at 2/3 after the load", read).isEmpty();
    }

    private long acknowledged() {
        return statuses.entrySet().stream().filter(e -> e.getKey() == 201 || e.getKey() == 202)
                .mapToLong(e -> e.getValue().sum()).sum();
    }

    /** What the load saw, once {@link #stop()} returned: its duration, answers by status, latency percentiles. */
    Summary summary() {
        long[] all;
        synchronized (latencies) {
            all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        }
        Map<Integer, Long> byStatus = new TreeMap<>();
        statuses.forEach((status, count) -> byStatus.put(status, count.sum()));
        return new Summary(Duration.ofNanos(stoppedNanos - startedNanos), byStatus, percentile(all, 50),
                percentile(all, 99), all.length == 0 ? Duration.ZERO : Duration.ofNanos(all[all.length - 1]));
    }

    private static Duration percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return Duration.ZERO;
        }
        // nearest rank: the smallest value with at least percent % of the values at or below it
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return Duration.ofNanos(sorted[Math.max(rank, 1) - 1]);
    }

    private static URI entity(URI api, String id) {
        return api.resolve("/v0/entity?id=" + id + "&replicas=" + REPLICAS);
    }

    /**
     * The load's figures: answers by status ({@code -1}: no answer), and the client-side latency of all answers.
     */
    record Summary(Duration duration, Map<Integer, Long> byStatus, Duration p50, Duration p99, Duration max) {
        long requests() {
            return byStatus.values().stream().mapToLong(Long::longValue).sum();
        }

        @Override
        public String toString() {
            return String.format("%d requests in %.1f s, by status %s, p50 %d ms, p99 %d ms, max %d ms", requests(),
                    duration.toMillis() / 1000.0, byStatus.entrySet().stream().map(e -> e.getValue() + " x "
                            + (e.getKey() == -1 ? "no answer" : e.getKey())).collect(Collectors.joining(", ")),
                    p50.toMillis(), p99.toMillis(), max.toMillis());
        }
    }
}
