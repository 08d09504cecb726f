package dev.dht.fault;

import dev.dht.fault.OpenLoopLoad.Outcome;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Figures of a set of {@link OpenLoopLoad} outcomes that were offered over {@code seconds}: requests, answered 2xx
 * per second, every other outcome by status, 503s without {@code Retry-After}, and latency percentiles (ms, from
 * the time each request was due).
 */
record LoadFigures(int requests, int ok, Map<Integer, Integer> others, int refusedWithoutRetryAfter,
        double p50Ms, double p99Ms, double seconds) {

    /** Figures of {@code outcomes}, offered over {@code seconds}. */
    static LoadFigures of(List<Outcome> outcomes, double seconds) {
        return of(outcomes, seconds, outcomes.size());
    }

    /**
     * Figures of {@code outcomes} of {@code offered} requests offered over {@code seconds}; those without an outcome
     * yet count as {@link Outcome#UNANSWERED} (a failure; their latency is unknown, so they are not in the
     * percentiles).
     */
    static LoadFigures of(List<Outcome> outcomes, double seconds, long offered) {
        Map<Integer, Integer> others = new TreeMap<>();
        if (offered > outcomes.size()) {
            others.put(Outcome.UNANSWERED, (int) (offered - outcomes.size()));
        }
        int ok = 0;
        int withoutRetryAfter = 0;
        double[] latencies = new double[outcomes.size()];
        int answered = 0;
        for (Outcome outcome : outcomes) {
            if (outcome.ok()) {
                ok++;
            } else {
                others.merge(outcome.status(), 1, Integer::sum);
                if (outcome.status() == 503 && !outcome.retryAfter()) {
                    withoutRetryAfter++;
                }
            }
            if (outcome.status() != Outcome.NOT_SENT) {
                latencies[answered++] = outcome.latencyMs();
            }
        }
        double[] sorted = Arrays.copyOf(latencies, answered);
        Arrays.sort(sorted);
        return new LoadFigures((int) Math.max(offered, outcomes.size()), ok, Map.copyOf(others), withoutRetryAfter,
                percentile(sorted, 50), percentile(sorted, 99), seconds);
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, index)];
    }

    /** Requests with an outcome of {@code status} ({@link Outcome}'s negative codes included). */
    int count(int status) {
        return others.getOrDefault(status, 0);
    }

    /** Share of the requests answered 2xx, 0 to 1 (1 without requests). */
    double okShare() {
        return requests == 0 ? 1 : (double) ok / requests;
    }

    /** Requests answered 2xx per second. */
    double okPerSecond() {
        return ok / seconds;
    }

    /** One line: requests, 2xx/s and share, other outcomes, p50 and p99. */
    String summary() {
        StringBuilder other = new StringBuilder();
        others.forEach((status, count) -> other.append(other.isEmpty() ? "" : ", ").append(count).append(" x ")
                .append(name(status)));
        return String.format(Locale.ROOT, "%d requests, %.0f ok/s (%.1f %%)%s, p50 %.0f ms, p99 %.0f ms", requests,
                okPerSecond(), 100 * okShare(), other.isEmpty() ? "" : " (" + other + ")", p50Ms, p99Ms);
    }

    private static String name(int status) {
        return switch (status) {
            case Outcome.NOT_SENT -> "not sent (generator at its limit)";
            case Outcome.IO_ERROR -> "I/O error";
            case Outcome.TIMEOUT -> "client timeout";
            case Outcome.WRONG_VALUE -> "wrong value";
            case Outcome.UNANSWERED -> "no answer within 2 s of the step's end";
            default -> Integer.toString(status);
        };
    }
}
