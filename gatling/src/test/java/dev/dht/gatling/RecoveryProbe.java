package dev.dht.gatling;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The last check of the overload test: does every node serve normally again within {@link #WINDOW} after the
 * load stops? It waits until the first request was sent, sleeps for the load's warm-up and duration (the end of
 * the injection; answers may still be outstanding then), then runs probe rounds every
 * {@link #PERIOD}: on every node {@code GET /v0/status} (200), a PUT (201) and a GET (200) of a probe key, each
 * with a {@link #TIMEOUT} timeout. The nodes count as recovered at the first round that started within the
 * window and is followed by {@link #STREAK} successful rounds in a row (itself included).
 *
 * <p>The result goes to a small {@code key=value} file (see {@link #finish()}) that find-breaking-point.sh reads.
 * The script runs the probe in a JVM of its own ({@link #main}), beside Gatling: under twice the breaking load
 * Gatling's open model can open connections up to the process's file descriptor limit, and a probe inside that
 * process could then neither connect nor write its report.
 */
public final class RecoveryProbe {
    /** How long after the end of the load the nodes may take to serve normally again. */
    static final Duration WINDOW = Duration.ofSeconds(10);
    static final Duration PERIOD = Duration.ofMillis(250);
    static final Duration TIMEOUT = Duration.ofSeconds(1);
    static final int STREAK = 3;

    private final LoadSettings settings;
    private final LongSupplier loadStart;
    private final Path report;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(TIMEOUT)
            .build();
    private final List<String> rounds = new ArrayList<>();
    private final Thread thread;
    private volatile long recoveredAfterMillis = -1;
    private volatile int failedRounds;

    /**
     * A probe of {@code settings.baseUrls()} that writes its result to {@code report}; {@code loadStart} gives the
     * epoch ms of the first request, or {@code Long.MAX_VALUE} while there is none. Call {@link #start()}.
     */
    public RecoveryProbe(LoadSettings settings, LongSupplier loadStart, Path report) {
        this.settings = settings;
        this.loadStart = loadStart;
        this.report = report;
        this.thread = new Thread(this::run, "recovery-probe");
        this.thread.setDaemon(true);
    }

    /** Longest wait for the load to start (the Gatling JVM to boot and send its first request). */
    static final Duration MAX_WAIT_FOR_LOAD = Duration.ofMinutes(5);

    /**
     * The probe in a JVM of its own: {@code RecoveryProbe REPORT LOAD_START_FILE}, with the load's settings as
     * system properties ({@link LoadSettings}: {@code baseUrls}, {@code warmup}, {@code duration}). Waits until
     * the Gatling run writes the epoch ms of its first request to {@code LOAD_START_FILE} (see
     * {@code loadStartFile}), probes after the load's end and writes the report. Exits 1 without a report if the
     * load did not start within {@link #MAX_WAIT_FOR_LOAD}.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: RecoveryProbe REPORT LOAD_START_FILE (settings as system properties)");
            System.exit(2);
        }
        LoadSettings settings = LoadSettings.fromSystemProperties();
        Path report = Path.of(args[0]);
        Path loadStartFile = Path.of(args[1]);
        long deadline = System.nanoTime() + MAX_WAIT_FOR_LOAD.toNanos();
        while (!Files.exists(loadStartFile)) {
            if (System.nanoTime() > deadline) {
                System.err.println("recovery probe: no load started within " + MAX_WAIT_FOR_LOAD);
                System.exit(1);
            }
            Thread.sleep(10);
        }
        long loadStart = Long.parseLong(Files.readString(loadStartFile).trim());
        long loadEnd = loadStart + settings.warmup().plus(settings.duration()).toMillis();
        Thread.sleep(Math.max(0, loadEnd - System.currentTimeMillis()));
        RecoveryProbe probe = new RecoveryProbe(settings, () -> loadStart, report);
        probe.start();
        probe.finish();
    }

    /** Starts the probe's thread. */
    public void start() {
        thread.start();
    }

    /**
     * Waits for the probe to end and writes the report: {@code recovered=true|false},
     * {@code recovered_after_ms} (from the end of the load to the start of the first round of the streak; -1 if
     * none), {@code rounds}, {@code failed_rounds}, then one comment line per round.
     */
    public void finish() throws InterruptedException {
        thread.join(WINDOW.plus(TIMEOUT.multipliedBy(3L * STREAK * settings.baseUrls().size())).toMillis() + 5_000);
        thread.interrupt();
        List<String> lines = new ArrayList<>();
        synchronized (rounds) {
            lines.add("recovered=" + (recoveredAfterMillis >= 0));
            lines.add("recovered_after_ms=" + recoveredAfterMillis);
            lines.add("window_ms=" + WINDOW.toMillis());
            lines.add("rounds=" + rounds.size());
            lines.add("failed_rounds=" + failedRounds);
            rounds.forEach(round -> lines.add("# " + round));
        }
        try {
            Files.write(report, lines);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the recovery report " + report, e);
        }
        System.out.println("recovery probe: " + lines.get(0) + " " + lines.get(1) + " (" + report + ")");
    }

    private void run() {
        try {
            while (loadStart.getAsLong() == Long.MAX_VALUE) {
                Thread.sleep(10);
            }
            long loadEndMillis = loadStart.getAsLong() + settings.warmup().plus(settings.duration()).toMillis();
            long loadEnd = System.nanoTime() + (loadEndMillis - System.currentTimeMillis()) * 1_000_000;
            Thread.sleep(Math.max(0, loadEndMillis - System.currentTimeMillis()));
            int streak = 0;
            long streakStart = -1;
            for (int number = 0; ; number++) {
                long roundStart = (System.nanoTime() - loadEnd) / 1_000_000;
                if (streak == 0 && roundStart > WINDOW.toMillis()) {
                    return;
                }
                String failure = round(number);
                synchronized (rounds) {
                    rounds.add("t=+" + roundStart + "ms " + (failure == null ? "ok" : "failed: " + failure));
                }
                if (failure == null) {
                    if (streak++ == 0) {
                        streakStart = roundStart;
                    }
                    if (streak == STREAK) {
                        recoveredAfterMillis = Math.max(0, streakStart);
                        return;
                    }
                } else {
                    streak = 0;
                    failedRounds++;
                }
                Thread.sleep(PERIOD.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One round over all nodes; null if everything answered as expected, else what went wrong first. */
    private String round(int number) throws InterruptedException {
        for (String url : settings.baseUrls()) {
            String key = "probe-" + number;
            String failure = expect(200, HttpRequest.newBuilder(URI.create(url + "/v0/status")).GET());
            if (failure == null) {
                failure = expect(201, HttpRequest.newBuilder(URI.create(url + "/v0/entity?id=" + key))
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(settings.value(number))));
            }
            if (failure == null) {
                failure = expect(200, HttpRequest.newBuilder(URI.create(url + "/v0/entity?id=" + key)).GET());
            }
            if (failure != null) {
                return url + " " + failure;
            }
        }
        return null;
    }

    private String expect(int status, HttpRequest.Builder request) throws InterruptedException {
        HttpRequest built = request.timeout(TIMEOUT).build();
        long started = System.nanoTime();
        try {
            int actual = client.send(built, HttpResponse.BodyHandlers.discarding()).statusCode();
            return actual == status ? null : built.method() + " " + built.uri().getPath() + ": " + actual + " after "
                    + (System.nanoTime() - started) / 1_000_000 + " ms";
        } catch (IOException e) {
            return built.method() + " " + built.uri().getPath() + ": " + e;
        }
    }
}
