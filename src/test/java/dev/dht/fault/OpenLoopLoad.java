package dev.dht.fault;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop load generator for the overload case: requests arrive at a fixed rate whatever the answers, as
 * users of a service do, unlike {@link LoadClients}, whose clients each wait for their answer and so slow down
 * with the server. Half the requests are PUTs of fresh keys with values of 1-8 KiB, half GETs of keys acknowledged
 * before, all at {@code replicas=2/3}, spread round robin over the nodes (each node is a coordinator).
 *
 * <p>Each request is sent asynchronously ({@link HttpClient#sendAsync}, HTTP/1.1, a connection per concurrent
 * request, idle ones reused) by one pacing thread. A request that would exceed {@code maxOutstanding} requests
 * waiting for their answers is not sent but counted as {@link Outcome#NOT_SENT}: a failure of the generator (it
 * cannot offer more), not of the server. Every outcome is kept with its start time, so that a phase can be cut
 * into windows ({@link Outcomes}). Acknowledged PUTs (201) are kept as id and value length; the value is a
 * function of both ({@link #value}), so the case can read every one back.
 */
final class OpenLoopLoad implements AutoCloseable {
    /** Client timeout of one request; past it the request counts as {@link Outcome#TIMEOUT}. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final List<URI> nodes;
    private final String prefix;
    private final int maxOutstanding;
    private final ExecutorService executor = Executors.newFixedThreadPool(2, runnable -> {
        Thread thread = new Thread(runnable, "open-loop-http");
        thread.setDaemon(true);
        return thread;
    });
    private final HttpClient http;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final SplittableRandom random = new SplittableRandom(19);
    /** Acknowledged PUTs: id -> value length in bytes. */
    final Map<String, Integer> acknowledged = new ConcurrentHashMap<>();
    private final List<String> acknowledgedIds = new ArrayList<>();
    private long sequence;

    /**
     * @param nodes          base URLs of the coordinators, used round robin
     * @param prefix         prefix of every key written
     * @param maxOutstanding requests that may wait for their answers at once; beyond it arrivals are not sent
     */
    OpenLoopLoad(List<URI> nodes, String prefix, int maxOutstanding) {
        this.nodes = List.copyOf(nodes);
        this.prefix = prefix;
        this.maxOutstanding = maxOutstanding;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * Offers {@code perSecond} requests per second for {@code duration}, evenly spaced, from the calling thread;
     * returns once the last one is sent (answers may still be outstanding: see {@link Outcomes#awaitAnswered}).
     */
    Outcomes offer(double perSecond, Duration duration) {
        Outcomes outcomes = new Outcomes(perSecond, duration);
        long start = outcomes.startNanos;
        long end = start + duration.toNanos();
        long sent = 0;
        for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
            long due = (long) ((now - start) / 1e9 * perSecond);
            for (; sent < due; sent++) {
                send(outcomes, start + (long) (sent * 1e9 / perSecond));
            }
            LockSupport.parkNanos(500_000);
        }
        outcomes.sent = sent;
        return outcomes;
    }

    private void send(Outcomes outcomes, long scheduledNanos) {
        if (outstanding.get() >= maxOutstanding) {
            outcomes.add(new Outcome(scheduledNanos, scheduledNanos, Outcome.NOT_SENT, false, false));
            return;
        }
        long n = sequence++;
        String readId = null;
        synchronized (acknowledgedIds) {
            if (n % 2 == 1 && !acknowledgedIds.isEmpty()) {
                readId = acknowledgedIds.get(random.nextInt(acknowledgedIds.size()));
            }
        }
        boolean put = readId == null;
        String id = put ? prefix + "-" + n : readId;
        int length = put ? 1024 + random.nextInt(7 * 1024 + 1) : acknowledged.get(readId);
        HttpRequest.Builder request = HttpRequest.newBuilder(
                nodes.get((int) (n % nodes.size())).resolve("/v0/entity?id=" + id + "&replicas=2/3"))
                .timeout(REQUEST_TIMEOUT);
        request = put ? request.PUT(HttpRequest.BodyPublishers.ofByteArray(value(id, length))) : request.GET();
        outstanding.incrementAndGet();
        http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, failure) -> {
            outstanding.decrementAndGet();
            long answered = System.nanoTime();
            if (failure != null) {
                int status = failure instanceof HttpTimeoutException
                        || failure.getCause() instanceof HttpTimeoutException ? Outcome.TIMEOUT : Outcome.IO_ERROR;
                outcomes.add(new Outcome(scheduledNanos, answered, status, put, false));
                return;
            }
            int status = response.statusCode();
            if (put && status == 201) {
                acknowledged.put(id, length);
                synchronized (acknowledgedIds) {
                    acknowledgedIds.add(id);
                }
            } else if (!put && status == 200 && !Arrays.equals(response.body(), value(id, length))) {
                status = Outcome.WRONG_VALUE;
            }
            boolean retryAfter = response.headers().firstValue("Retry-After").isPresent();
            outcomes.add(new Outcome(scheduledNanos, answered, status, put, retryAfter));
        });
    }

    /** The value written under {@code id}: {@code length} bytes that depend on the id. */
    static byte[] value(String id, int length) {
        byte[] seed = (id + ":").getBytes(StandardCharsets.US_ASCII);
        byte[] value = new byte[length];
        for (int i = 0; i < length; i++) {
            value[i] = seed[i % seed.length];
        }
        return value;
    }

    /** Requests still waiting for their answers. */
    int outstanding() {
        return outstanding.get();
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /**
     * The outcome of one request.
     *
     * @param startNanos    when it was due ({@link System#nanoTime()}); latency counts from there, so time spent
     *                      waiting for the pacing thread counts too
     * @param answeredNanos when its answer (or failure) arrived
     * @param status        HTTP status, or one of the negative codes below
     * @param retryAfter    whether the answer carried a {@code Retry-After} header
     */
    record Outcome(long startNanos, long answeredNanos, int status, boolean put, boolean retryAfter) {
        /** Not sent: {@code maxOutstanding} requests were already waiting (the generator's limit). */
        static final int NOT_SENT = -1;
        /** Connection refused, reset or closed before the answer. */
        static final int IO_ERROR = -2;
        /** No answer within {@link #REQUEST_TIMEOUT}. */
        static final int TIMEOUT = -3;
        /** A GET answered 200 with another value than the one acknowledged. */
        static final int WRONG_VALUE = -4;
        /** Not answered yet when the figures were taken (see {@link LoadFigures#of(List, double, long)}). */
        static final int UNANSWERED = -5;

        boolean ok() {
            return status >= 200 && status < 300;
        }

        double latencyMs() {
            return (answeredNanos - startNanos) / 1e6;
        }
    }

    /** The outcomes of one {@link #offer} call: its rate, duration and every request's outcome. */
    static final class Outcomes {
        final double perSecond;
        final Duration duration;
        final long startNanos = System.nanoTime();
        private final ConcurrentLinkedQueue<Outcome> all = new ConcurrentLinkedQueue<>();
        private final AtomicInteger count = new AtomicInteger();
        /** Requests offered (sent or counted as not sent); set once {@link #offer} returns. */
        private volatile long sent;

        Outcomes(double perSecond, Duration duration) {
            this.perSecond = perSecond;
            this.duration = duration;
        }

        void add(Outcome outcome) {
            all.add(outcome);
            count.incrementAndGet();
        }

        /** Waits until every request offered has an outcome, at most {@code timeout}; returns whether all have. */
        boolean awaitAnswered(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (count.get() < sent && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            return count.get() >= sent;
        }

        /** Outcomes of the requests due from {@code fromMs} to {@code toMs} after the start, so far. */
        List<Outcome> between(double fromMs, double toMs) {
            List<Outcome> window = new ArrayList<>();
            for (Outcome outcome : all) {
                double at = (outcome.startNanos() - startNanos) / 1e6;
                if (at >= fromMs && at < toMs) {
                    window.add(outcome);
                }
            }
            return window;
        }

        /** Requests offered (sent or counted as not sent); 0 until {@link #offer} returned. */
        long sent() {
            return sent;
        }

        /** Every outcome so far. */
        List<Outcome> all() {
            return List.copyOf(all);
        }
    }
}
