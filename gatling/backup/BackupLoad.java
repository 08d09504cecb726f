import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load client of gatling/backup-benchmark.sh, run as a single-file source program (java BackupLoad.java ...):
 *
 *   load URLS KEYS VALUE_SIZE CONCURRENCY   PUTs keys b0..b(KEYS-1) at 2/3, random (incompressible) values,
 *                                           CONCURRENCY in flight, round-robin over URLS; retries 503/504
 *   probe URLS KEYS RATE STOP_FILE          open-loop GETs of random keys at RATE/s until STOP_FILE exists; prints
 *                                           "probe requests=N errors=E p50_ms=.. p99_ms=.. max_ms=.." (latency from
 *                                           the intended send time, so a stalled server is not under-reported) of
 *                                           the requests after its first WARMUP_SECONDS seconds: those pay for the
 *                                           probe's own start (class loading, JIT, first connections), which took
 *                                           up to a second with the CPU busy; prints "warm" when they are over
 */
public class BackupLoad {
    /** Seconds of probe requests sent but not counted. */
    static final int WARMUP_SECONDS = 3;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    public static void main(String[] args) throws Exception {
        List<URI> urls = Arrays.stream(args[1].split(",")).map(URI::create).toList();
        int keys = Integer.parseInt(args[2]);
        if (args[0].equals("load")) {
            load(urls, keys, Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        } else {
            probe(urls, keys, Integer.parseInt(args[3]), Path.of(args[4]));
        }
    }

    static void load(List<URI> urls, int keys, int valueSize, int concurrency) throws Exception {
        Semaphore inFlight = new Semaphore(concurrency);
        Random random = new Random(1);
        AtomicLong failed = new AtomicLong();
        long started = System.nanoTime();
        for (int i = 0; i < keys; i++) {
            byte[] value = new byte[valueSize];
            random.nextBytes(value);
            URI uri = urls.get(i % urls.size()).resolve("/v0/entity?id=b" + i + "&replicas=2/3");
            inFlight.acquire();
            put(uri, value, 20).whenComplete((status, error) -> {
                if (error != null || status != 201) {
                    failed.incrementAndGet();
                }
                inFlight.release();
            });
        }
        inFlight.acquire(concurrency);
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("load keys=%d failed=%d seconds=%.1f puts_per_s=%.0f%n", keys, failed.get(), seconds,
                keys / seconds);
    }

    static CompletableFuture<Integer> put(URI uri, byte[] value, int attempts) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(value)).build();
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.discarding())
                .handle((response, error) -> error != null ? 0 : response.statusCode())
                .thenCompose(status -> (status == 503 || status == 504 || status == 0) && attempts > 1
                        ? CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS))
                                .thenCompose(ignored -> put(uri, value, attempts - 1))
                        : CompletableFuture.completedFuture(status));
    }

    static void probe(List<URI> urls, int keys, int rate, Path stop) throws Exception {
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        AtomicLong errors = new AtomicLong();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        Random random = new Random(2);
        long periodNanos = 1_000_000_000L / rate;
        long start = System.nanoTime();
        long counted = start + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS);
        boolean warm = false;
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (long n = 0; !Files.exists(stop); n++) {
            long intended = start + n * periodNanos;
            if (!warm && intended >= counted) {
                warm = true;
                System.err.println("warm");
            }
            long wait = intended - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            URI uri = urls.get((int) (n % urls.size())).resolve("/v0/entity?id=b" + random.nextInt(keys));
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build();
            boolean recorded = warm;
            pending.add(HTTP.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
                if (!recorded) {
                    return;
                }
                if (error != null || response.statusCode() != 200) {
                    errors.incrementAndGet();
                }
                latencies.add(System.nanoTime() - intended);
            }));
            if (pending.size() > 10_000) {
                pending.removeIf(CompletableFuture::isDone);
            }
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
        timer.shutdown();
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf("probe requests=%d errors=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f%n", sorted.length,
                errors.get(), at(sorted, 0.50), at(sorted, 0.99), sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6);
    }

    static double at(long[] sorted, double quantile) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] / 1e6;
    }
}
