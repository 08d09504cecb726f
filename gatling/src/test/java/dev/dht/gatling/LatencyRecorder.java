package dev.dht.gatling;

import io.gatling.javaapi.core.Session;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts every answered request of a run by HTTP status, with an exact histogram of Gatling's response times
 * (whole milliseconds, as Gatling measures them), and writes the summary that find-breaking-point.sh reads.
 *
 * <p>Why not Gatling's own files: since Gatling 3.12 {@code simulation.log} is a binary format of its own and the
 * HTML report no longer comes with {@code js/stats.json}. The tapes therefore save the status and the response
 * time of each request into the session and hand the session to {@link #record(Session)}.
 *
 * <p>An error is a request that Gatling counts as KO: an unexpected status, or no answer at all (connection
 * refused, request timeout), which is recorded under the status {@code none}, without a time.
 */
public final class LatencyRecorder {
    /** Session attribute of the response's status code. */
    static final String STATUS = "status";
    /** Session attribute of the response time in ms. */
    static final String MILLIS = "ms";

    private static final int MAX_MILLIS = 120_000;
    private static final String NONE = "none";

    private final Map<String, AtomicLongArray> histograms = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> errorsByStatus = new ConcurrentHashMap<>();
    private final AtomicLong unanswered = new AtomicLong();
    private final AtomicLong first = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong last = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong firstSent = new AtomicLong(Long.MAX_VALUE);
    private final long warmupMillis;

    /** A recorder that ignores the requests sent during the first {@code warmupMillis} of the load. */
    public LatencyRecorder(long warmupMillis) {
        this.warmupMillis = warmupMillis;
    }

    /** When the first request of the run was sent (epoch ms), {@code Long.MAX_VALUE} before it. */
    public long firstSentMillis() {
        return firstSent.get();
    }

    /**
     * Records the request that {@code session} (one virtual user, one request) just made, unless it was sent
     * during the warm-up.
     */
    public Session record(Session session) {
        long now = System.currentTimeMillis();
        boolean answered = session.contains(STATUS) && session.contains(MILLIS);
        long sent = answered ? now - session.getInt(MILLIS) : now;
        if (sent < firstSent.accumulateAndGet(sent, Math::min) + warmupMillis) {
            return session;
        }
        first.accumulateAndGet(now, Math::min);
        last.accumulateAndGet(now, Math::max);
        String status = answered ? Integer.toString(session.getInt(STATUS)) : NONE;
        if (session.isFailed()) {
            errorsByStatus.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
        }
        if (answered) {
            int millis = Math.min(Math.max(0, session.getInt(MILLIS)), MAX_MILLIS);
            histograms.computeIfAbsent(status, s -> new AtomicLongArray(MAX_MILLIS + 1)).incrementAndGet(millis);
        } else {
            unanswered.incrementAndGet();
        }
        return session;
    }

    /**
     * The summary as {@code key=value} lines: {@code requests}, {@code errors}, {@code error_percent},
     * {@code rps} (answered or not, per second between the first and the last), {@code p50_ms}, {@code p99_ms},
     * {@code p999_ms}, {@code max_ms} over all answered requests, then per status {@code status.CODE.count},
     * {@code .errors}, {@code .p50_ms}, {@code .p99_ms}, {@code .p999_ms}, {@code .max_ms}.
     */
    public List<String> summary() {
        long[] all = new long[MAX_MILLIS + 1];
        Map<String, long[]> byStatus = new TreeMap<>();
        histograms.forEach((status, histogram) -> {
            long[] counts = new long[MAX_MILLIS + 1];
            for (int i = 0; i <= MAX_MILLIS; i++) {
                counts[i] = histogram.get(i);
                all[i] += counts[i];
            }
            byStatus.put(status, counts);
        });
        long answered = total(all);
        long requests = answered + unanswered.get();
        long errors = errorsByStatus.values().stream().mapToLong(AtomicLong::get).sum();
        double seconds = requests < 2 ? 0 : (last.get() - first.get()) / 1000.0;
        List<String> lines = new ArrayList<>();
        lines.add("requests=" + requests);
        lines.add("errors=" + errors);
        lines.add("error_percent=" + format(requests == 0 ? 0 : 100.0 * errors / requests));
        lines.add("rps=" + format(seconds <= 0 ? 0 : requests / seconds));
        addPercentiles(lines, "", all);
        byStatus.forEach((status, counts) -> {
            lines.add("status." + status + ".count=" + total(counts));
            lines.add("status." + status + ".errors=" + errorCount(status));
            addPercentiles(lines, "status." + status + ".", counts);
        });
        if (unanswered.get() > 0) {
            lines.add("status." + NONE + ".count=" + unanswered.get());
            lines.add("status." + NONE + ".errors=" + errorCount(NONE));
        }
        return lines;
    }

    /** Writes {@link #summary()} to {@code file}. */
    public void write(Path file) {
        try {
            Files.write(file, summary());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the latency summary " + file, e);
        }
    }

    private long errorCount(String status) {
        AtomicLong count = errorsByStatus.get(status);
        return count == null ? 0 : count.get();
    }

    private static void addPercentiles(List<String> lines, String prefix, long[] counts) {
        lines.add(prefix + "p50_ms=" + percentile(counts, 50));
        lines.add(prefix + "p99_ms=" + percentile(counts, 99));
        lines.add(prefix + "p999_ms=" + percentile(counts, 99.9));
        lines.add(prefix + "max_ms=" + percentile(counts, 100));
    }

    /** The smallest time t such that at least {@code percent} % of the requests took t or less; -1 if none. */
    static int percentile(long[] counts, double percent) {
        long total = total(counts);
        if (total == 0) {
            return -1;
        }
        long rank = Math.max(1, (long) Math.ceil(total * percent / 100.0));
        long seen = 0;
        for (int millis = 0; millis < counts.length; millis++) {
            seen += counts[millis];
            if (seen >= rank) {
                return millis;
            }
        }
        return counts.length - 1;
    }

    private static long total(long[] counts) {
        long total = 0;
        for (long count : counts) {
            total += count;
        }
        return total;
    }

    private static String format(double value) {
        return String.format(Locale.ROOT, "%.3f", value);
    }
}
