package dev.dht.gatling;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes the preloaded keys of the GET tapes before the load starts, with the JDK's HTTP client (not Gatling, so
 * the preload does not appear in the report). Keys go out in ascending order, {@link #IN_FLIGHT} at a time,
 * round-robin over the nodes. A marker key written last records a completed preload; when it is present the
 * preload is skipped, so steps of a breaking-point search preload only once.
 */
public final class Preloader {
    /** Requests in flight during the preload. */
    static final int IN_FLIGHT = 64;
    private static final int ATTEMPTS = 5;

    private final LoadSettings settings;
    private final KeySpace keySpace;
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    /** A preloader of {@code settings.keys()} keys of {@code keySpace}. */
    public Preloader(LoadSettings settings, KeySpace keySpace) {
        this.settings = settings;
        this.keySpace = keySpace;
    }

    /**
     * Writes all preloaded keys unless the marker shows they are there.
     *
     * @throws IllegalStateException if a key could not be written after {@value #ATTEMPTS} attempts
     */
    public void preloadIfMissing() throws InterruptedException {
        String marker = keySpace.preloadMarker();
        if (send(get(0, marker)).statusCode() == 200) {
            System.out.println("preload: marker " + marker + " found, the " + settings.keys() + " keys are there");
            return;
        }
        long started = System.nanoTime();
        Semaphore slots = new Semaphore(IN_FLIGHT);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int tenth = Math.max(1, settings.keys() / 10);
        for (int i = 0; i < settings.keys() && failure.get() == null; i++) {
            slots.acquire();
            int index = i;
            putWithRetries(index, keySpace.preloaded(index), settings.value(index), 1)
                    .whenComplete((ok, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        }
                        slots.release();
                    });
            if ((i + 1) % tenth == 0) {
                System.out.printf("preload: %d of %d keys sent%n", i + 1, settings.keys());
            }
        }
        slots.acquire(IN_FLIGHT);
        if (failure.get() != null) {
            throw new IllegalStateException("preload failed: " + failure.get().getMessage(), failure.get());
        }
        int status = send(put(0, marker, new byte[0])).statusCode();
        if (status != 201) {
            throw new IllegalStateException("preload: the marker " + marker + " got " + status + ", not 201");
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("preload: %d keys of %d bytes in %.1f s (%.0f/s)%n", settings.keys(), settings.valueSize(),
                seconds, settings.keys() / seconds);
    }

    private CompletableFuture<Void> putWithRetries(int index, String key, byte[] value, int attempt) {
        return client.sendAsync(put(index, key, value), HttpResponse.BodyHandlers.discarding())
                .handle((response, error) -> {
                    if (error == null && response.statusCode() == 201) {
                        return CompletableFuture.<Void>completedFuture(null);
                    }
                    String problem = error != null ? error.toString() : "status " + response.statusCode();
                    if (attempt >= ATTEMPTS) {
                        return CompletableFuture.<Void>failedFuture(new IllegalStateException(
                                "PUT " + key + ": " + problem + " after " + attempt + " attempts"));
                    }
                    // 503 (storage queue full) or 504: back off, then try again
                    return CompletableFuture.runAsync(() -> { },
                                    CompletableFuture.delayedExecutor(100L * attempt, TimeUnit.MILLISECONDS))
                            .thenCompose(ignored -> putWithRetries(index, key, value, attempt + 1));
                })
                .thenCompose(next -> next);
    }

    private HttpRequest put(int index, String key, byte[] value) {
        return HttpRequest.newBuilder(uri(index, key))
                .timeout(LoadSettings.REQUEST_TIMEOUT)
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(value))
                .build();
    }

    private HttpRequest get(int index, String key) {
        return HttpRequest.newBuilder(uri(index, key)).timeout(LoadSettings.REQUEST_TIMEOUT).GET().build();
    }

    private URI uri(int index, String key) {
        List<String> urls = settings.baseUrls();
        String query = "id=" + URLEncoder.encode(key, StandardCharsets.UTF_8)
                + (settings.replicas().isEmpty() ? "" : "&replicas=" + settings.replicas());
        return URI.create(urls.get(Math.floorMod(index, urls.size())) + "/v0/entity?" + query);
    }

    private HttpResponse<Void> send(HttpRequest request) throws InterruptedException {
        try {
            return client.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw new UncheckedIOException("preload: " + request.method() + " " + request.uri() + " failed", e);
        }
    }
}
