package dev.dht.fault;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Watches the heap of node processes while a case runs: every second it reads each node's
 * {@code /actuator/prometheus} and keeps the highest sum of {@code jvm_memory_used_bytes{area="heap"}} seen, and the
 * heap's limit (the sum of the heap pools' {@code jvm_memory_max_bytes} that are set). A scrape that fails or takes
 * over 2 s (a node too busy) is skipped, so the peak is a lower bound. Runs on a daemon thread of its own.
 */
final class HeapWatch {
    private final List<String> urls;
    private final AtomicLongArray peakUsed;
    private final AtomicLongArray max;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int scrapes;

    private HeapWatch(List<String> urls) {
        this.urls = List.copyOf(urls);
        this.peakUsed = new AtomicLongArray(urls.size());
        this.max = new AtomicLongArray(urls.size());
        this.thread = new Thread(this::run, "heap-watch");
        thread.setDaemon(true);
    }

    /** Starts watching the nodes at {@code urls} (base URLs). */
    static HeapWatch start(List<String> urls) {
        HeapWatch watch = new HeapWatch(urls);
        watch.thread.start();
        return watch;
    }

    /** Stops watching and waits for the scrape in progress. */
    void stop() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
    }

    /** e.g. "peak used 120/180/95 MB of 256 MB (14 scrapes)". */
    String summary() {
        StringBuilder used = new StringBuilder();
        long limit = 0;
        for (int i = 0; i < urls.size(); i++) {
            used.append(i == 0 ? "" : "/").append(peakUsed.get(i) >> 20);
            limit = Math.max(limit, max.get(i));
        }
        return String.format(Locale.ROOT, "peak used %s MB of %d MB (%d scrapes)", used, limit >> 20, scrapes);
    }

    private void run() {
        while (running) {
            for (int i = 0; i < urls.size() && running; i++) {
                scrape(i);
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void scrape(int node) {
        String text;
        try {
            text = http.send(HttpRequest.newBuilder(URI.create(urls.get(node) + "/actuator/prometheus"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
            return;
        }
        long used = 0;
        long limit = 0;
        for (String line : text.split("\n")) {
            if (!line.contains("area=\"heap\"")) {
                continue;
            }
            if (line.startsWith("jvm_memory_used_bytes{")) {
                used += value(line);
            } else if (line.startsWith("jvm_memory_max_bytes{")) {
                limit += Math.max(0, value(line));
            }
        }
        scrapes++;
        peakUsed.accumulateAndGet(node, used, Math::max);
        max.set(node, limit);
    }

    private static long value(String line) {
        return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }
}
