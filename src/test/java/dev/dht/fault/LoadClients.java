package dev.dht.fault;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * Closed-loop clients for the fault cases: each of N threads sends one request at a time to the node its index
 * picks, PUTs of fresh keys alternating with GETs of keys it wrote, until {@link #stop()}. Outcomes (status, or
 * -1 for an I/O error or a client timeout of 10 s) and latencies are recorded per phase, and every acknowledged
 * PUT (201) is kept with its value, so a case can check that none was lost.
 */
final class LoadClients {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();
    /** Acknowledged PUTs: id -> value. */
    final Map<String, String> acknowledged = new ConcurrentHashMap<>();
    /** Acknowledged PUTs whose replicas were {@code from/from}: every replica acknowledged them. */
    final Map<String, String> acknowledgedByAll = new ConcurrentHashMap<>();
    private volatile Phase phase = new Phase("start");
    private final List<Phase> phases = new ArrayList<>();

    /**
     * Starts {@code clients} threads.
     *
     * @param node     base URL of the node client {@code i} sends to
     * @param replicas the {@code replicas} parameter of client {@code i}'s requests
     */
    LoadClients(int clients, String prefix, IntFunction<URI> node, IntFunction<String> replicas) {
        phases.add(phase);
        for (int i = 0; i < clients; i++) {
            int client = i;
            Thread thread = new Thread(() -> run(client, prefix, node.apply(client), replicas.apply(client)),
                    "load-" + prefix + "-" + i);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
    }

    /** Starts recording into a new phase named {@code name}; returns the one that ended. */
    synchronized Phase phase(String name) {
        Phase ended = phase;
        phase = new Phase(name);
        phases.add(phase);
        return ended;
    }

    /** The phase being recorded. */
    Phase current() {
        return phase;
    }

    /** Stops every client (waiting for its request in progress); returns the phase that ended. */
    Phase stop() throws InterruptedException {
        running.set(false);
        for (Thread thread : threads) {
            thread.join(REQUEST_TIMEOUT.multipliedBy(2).toMillis());
        }
        return phase;
    }

    /**
     * Lets the clients run, in 2-s phases of the given names, until one in which every request of every client
     * succeeded (the JVMs compiled the request path: a cold cluster on a busy machine misses the 1-s replica
     * timeout now and then), at most 40 s, so that a fault starts on a warm cluster. Returns the ms it took.
     */
    static long warmUp(Map<LoadClients, String> phaseNames) throws InterruptedException {
        long started = System.nanoTime();
        boolean steady = false;
        while (!steady && System.nanoTime() - started < Duration.ofSeconds(40).toNanos()) {
            phaseNames.forEach(LoadClients::phase);
            Thread.sleep(2_000);
            steady = phaseNames.keySet().stream().map(LoadClients::current)
                    .allMatch(phase -> phase.requests() > 0 && phase.succeeded() == phase.requests());
        }
        return (System.nanoTime() - started) / 1_000_000;
    }

    private void run(int client, String prefix, URI node, String replicas) {
        List<String> written = new ArrayList<>();
        for (int n = 0; running.get(); n++) {
            boolean put = n % 2 == 0 || written.isEmpty();
            String id = put ? prefix + "-" + client + "-" + n : written.get((n * 7919) % written.size());
            String value = "value-of-" + id;
            URI uri = URI.create(node + "/v0/entity?id=" + id + "&replicas=" + replicas);
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(REQUEST_TIMEOUT);
            request = put ? request.PUT(HttpRequest.BodyPublishers.ofString(value)) : request.GET();
            Phase current = phase;
            long started = System.nanoTime();
            int status;
            try {
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                status = response.statusCode();
                if (put && status == 201) {
                    acknowledged.put(id, value);
                    if (replicas.equals("3/3")) {
                        acknowledgedByAll.put(id, value);
                    }
                    written.add(id);
                }
                if (!put && status == 200 && !response.body().equals(acknowledged.get(id))) {
                    status = -2; // a wrong value: counted as a failure
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (java.io.IOException e) {
                status = -1;
            }
            current.record(status, System.nanoTime() - started, put);
            if (status == -1) {
                sleepQuietly(); // a node down: do not spin on refused connections
            }
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Outcomes of the requests sent during one phase of a case. */
    static final class Phase {
        final String name;
        private final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        private final List<Long> latencies = new ArrayList<>();
        private final AtomicInteger failedGets = new AtomicInteger();

        Phase(String name) {
            this.name = name;
        }

        void record(int status, long nanos, boolean put) {
            if (!put && (status < 200 || status >= 300)) {
                failedGets.incrementAndGet();
            }
            statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
            synchronized (latencies) {
                latencies.add(nanos);
            }
        }

        int requests() {
            return statuses.values().stream().mapToInt(AtomicInteger::get).sum();
        }

        /** Requests answered 2xx or 404 (a GET of a key whose write is not visible yet is not expected here). */
        int succeeded() {
            return statuses.entrySet().stream().filter(e -> e.getKey() >= 200 && e.getKey() < 300)
                    .mapToInt(e -> e.getValue().get()).sum();
        }

        int count(int status) {
            AtomicInteger count = statuses.get(status);
            return count == null ? 0 : count.get();
        }

        /** The {@code p}-th percentile latency in ms (0 < p <= 100); 0 without requests. */
        double percentileMs(double p) {
            synchronized (latencies) {
                if (latencies.isEmpty()) {
                    return 0;
                }
                List<Long> sorted = new ArrayList<>(latencies);
                sorted.sort(null);
                int index = (int) Math.ceil(p / 100 * sorted.size()) - 1;
                return sorted.get(Math.max(0, index)) / 1e6;
            }
        }

        /** One line: requests, success rate, statuses other than 2xx (and how many were GETs), p50 and p99. */
        String summary() {
            int requests = requests();
            StringBuilder other = new StringBuilder();
            statuses.forEach((status, count) -> {
                if (status < 200 || status >= 300) {
                    other.append(other.isEmpty() ? "" : ", ").append(count.get()).append(" x ")
                            .append(status == -1 ? "I/O error" : status == -2 ? "wrong value" : status);
                }
            });
            return String.format(java.util.Locale.ROOT, "%s: %d requests, %.1f %% ok%s, p50 %.1f ms, p99 %.1f ms",
                    name, requests, requests == 0 ? 0 : 100.0 * succeeded() / requests,
                    other.isEmpty() ? "" : " (" + other + "; " + failedGets.get() + " of the failures GETs)",
                    percentileMs(50), percentileMs(99));
        }
    }
}
