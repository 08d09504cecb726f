package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.ByteArrayBody;
import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.rampUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.responseTimeInMillis;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.status;

import io.gatling.javaapi.core.CheckBuilder;
import io.gatling.javaapi.core.OpenInjectionStep;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import io.gatling.javaapi.http.HttpRequestActionBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The settings every tape shares, read from system properties (each {@code -Dname=value} on the Maven command
 * line reaches the simulation), and the few Gatling pieces built from them: the HTTP protocol, the open-model
 * injection at a constant arrival rate, and the PUT and GET requests of {@code /v0/entity}.
 *
 * <table>
 * <caption>System properties</caption>
 * <tr><th>property</th><th>default</th><th>meaning</th></tr>
 * <tr><td>baseUrls</td><td>http://localhost:8080</td><td>comma-separated node URLs; requests go round-robin</td></tr>
 * <tr><td>rate</td><td>1000</td><td>arrival rate, requests per second (open model: independent of answers)</td></tr>
 * <tr><td>duration</td><td>60</td><td>seconds of load at that rate, measured</td></tr>
 * <tr><td>warmup</td><td>5</td><td>seconds before it, ramping from 10 % to 100 % of the rate, not measured</td></tr>
 * <tr><td>valueSize</td><td>1024</td><td>bytes per PUT value</td></tr>
 * <tr><td>replicas</td><td>(empty)</td><td>{@code ack/from} sent with every request; empty: the server's default</td></tr>
 * <tr><td>keys</td><td>100000</td><td>keys the GET tapes preload and read</td></tr>
 * <tr><td>summary</td><td>(none)</td><td>file for the {@link LatencyRecorder}'s summary; none: console only</td></tr>
 * <tr><td>loadStartFile</td><td>(none)</td><td>file the epoch ms of the first request goes to, for a {@link RecoveryProbe}
 * running in a JVM of its own; none: not written</td></tr>
 * </table>
 */
public final class LoadSettings {
    /** Request timeout of Gatling (gatling.conf, {@code gatling.http.requestTimeout}), for the preload client too. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private static final int VALUE_POOL_BYTES = 64 * 1024 * 1024;
    private static final int MAX_VALUE_POOL = 256;

    private final List<String> baseUrls;
    private final double rate;
    private final Duration duration;
    private final Duration warmup;
    private final int valueSize;
    private final String replicas;
    private final int keys;
    private final Optional<Path> summary;
    private final Optional<Path> loadStartFile;
    private final byte[][] values;

    private LoadSettings(List<String> baseUrls, double rate, Duration duration, Duration warmup, int valueSize,
                         String replicas, int keys, Optional<Path> summary, Optional<Path> loadStartFile) {
        this.baseUrls = List.copyOf(baseUrls);
        this.rate = rate;
        this.duration = duration;
        this.warmup = warmup;
        this.valueSize = valueSize;
        this.replicas = replicas;
        this.keys = keys;
        this.summary = summary;
        this.loadStartFile = loadStartFile;
        // A pool of random values rather than one: LevelDB compresses its blocks, and equal neighbouring values
        // would compress far better than real data. At most 64 MiB in all.
        Random random = new Random(42);
        this.values = new byte[Math.max(1, Math.min(MAX_VALUE_POOL, VALUE_POOL_BYTES / Math.max(1, valueSize)))][];
        for (int i = 0; i < values.length; i++) {
            values[i] = new byte[valueSize];
            random.nextBytes(values[i]);
        }
    }

    /**
     * Reads the settings from the system properties of the table above.
     *
     * @throws IllegalArgumentException naming the property, if one is malformed or out of range
     */
    public static LoadSettings fromSystemProperties() {
        List<String> urls = Arrays.stream(System.getProperty("baseUrls", "http://localhost:8080").split(","))
                .map(String::trim)
                .filter(url -> !url.isEmpty())
                .map(url -> url.endsWith("/") ? url.substring(0, url.length() - 1) : url)
                .toList();
        if (urls.isEmpty() || urls.stream().anyMatch(url -> !url.startsWith("http://"))) {
            throw new IllegalArgumentException("baseUrls must be comma-separated http:// URLs, was '"
                    + System.getProperty("baseUrls") + "'");
        }
        double rate = number("rate", "1000");
        long seconds = (long) number("duration", "60");
        long warmupSeconds = (long) number("warmup", "5");
        int valueSize = (int) number("valueSize", "1024");
        int keys = (int) number("keys", "100000");
        if (rate <= 0 || seconds <= 0 || warmupSeconds < 0 || keys <= 0 || valueSize < 0
                || valueSize > BaselineServer.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("need rate > 0, duration > 0, warmup >= 0, keys > 0 and 0 <= valueSize"
                    + " <= " + BaselineServer.MAX_VALUE_BYTES + "; were " + rate + ", " + seconds + ", "
                    + warmupSeconds + ", " + keys + ", " + valueSize);
        }
        String replicas = System.getProperty("replicas", "").trim();
        if (!replicas.isEmpty() && !replicas.matches("[1-9][0-9]*/[1-9][0-9]*")) {
            throw new IllegalArgumentException("replicas must be ack/from, e.g. 2/3, or empty; was '" + replicas + "'");
        }
        return new LoadSettings(urls, rate, Duration.ofSeconds(seconds), Duration.ofSeconds(warmupSeconds), valueSize,
                replicas, keys, path("summary"), path("loadStartFile"));
    }

    private static Optional<Path> path(String property) {
        return Optional.ofNullable(System.getProperty(property)).filter(path -> !path.isBlank()).map(Path::of);
    }

    private static double number(String property, String defaultValue) {
        String text = System.getProperty(property, defaultValue).trim();
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(property + " must be a number, was '" + text + "'", e);
        }
    }

    /** Shared keep-alive connections (server-to-server traffic, not browsers), no warm-up call to the internet. */
    public HttpProtocolBuilder protocol() {
        return http.baseUrls(baseUrls)
                .shareConnections()
                .disableWarmUp()
                .disableCaching()
                .disableFollowRedirect()
                .disableAutoReferer();
    }

    /**
     * The open workload: during {@code warmup} the arrival rate ramps from 10 % to 100 % of {@code rate} (it warms
     * the JITs of both sides up and is not measured), then a new virtual user, who makes one request, arrives
     * every {@code 1/rate} s during {@code duration}, whatever the answers.
     */
    public OpenInjectionStep[] injection() {
        OpenInjectionStep constant = constantUsersPerSec(rate).during(duration);
        return warmup.isZero()
                ? new OpenInjectionStep[] {constant}
                : new OpenInjectionStep[] {rampUsersPerSec(rate / 10).to(rate).during(warmup), constant};
    }

    /** PUT of the session's {@code key} with a value of {@code valueSize} bytes; 201 expected. */
    public HttpRequestActionBuilder put(String name) {
        return ofKey(http(name).put("/v0/entity"))
                .header("Content-Type", "application/octet-stream")
                .body(ByteArrayBody(session -> values[ThreadLocalRandom.current().nextInt(values.length)]))
                .check(savedForRecorder())
                .check(status().is(201));
    }

    /** GET of the session's {@code key}, which exists; 200 expected. */
    public HttpRequestActionBuilder get(String name) {
        return ofKey(http(name).get("/v0/entity")).check(savedForRecorder()).check(status().is(200));
    }

    /** {@code request} for the session's {@code key}, with the {@code replicas} parameter if one is set. */
    private HttpRequestActionBuilder ofKey(HttpRequestActionBuilder request) {
        HttpRequestActionBuilder keyed = request.queryParam("id", "#{key}");
        return replicas.isEmpty() ? keyed : keyed.queryParam("replicas", replicas);
    }

    /** The status and time of a response into the session, for the {@link LatencyRecorder}, before any test. */
    private static List<CheckBuilder> savedForRecorder() {
        return List.of(status().saveAs(LatencyRecorder.STATUS), responseTimeInMillis().saveAs(LatencyRecorder.MILLIS));
    }

    /** The node URLs, in the order given. */
    public List<String> baseUrls() {
        return baseUrls;
    }

    /** The measured load's length. */
    public Duration duration() {
        return duration;
    }

    /** The unmeasured ramp's length, before the measured load. */
    public Duration warmup() {
        return warmup;
    }

    /** The {@code replicas} parameter, empty for the server's default. */
    public String replicas() {
        return replicas;
    }

    /** How many keys the GET tapes preload and read. */
    public int keys() {
        return keys;
    }

    /** Bytes per value. */
    public int valueSize() {
        return valueSize;
    }

    /** One of the pool's random values. */
    public byte[] value(int index) {
        return values[Math.floorMod(index, values.length)];
    }

    /** Where the latency summary goes, if to a file. */
    public Optional<Path> summary() {
        return summary;
    }

    /** Where the epoch ms of the first request goes, if a recovery probe waits for it. */
    public Optional<Path> loadStartFile() {
        return loadStartFile;
    }

    @Override
    public String toString() {
        return "baseUrls=" + String.join(",", baseUrls) + " rate=" + rate + "/s duration=" + duration.toSeconds()
                + "s warmup=" + warmup.toSeconds() + "s valueSize=" + valueSize
                + " replicas=" + (replicas.isEmpty() ? "(server default)" : replicas) + " keys=" + keys;
    }
}
