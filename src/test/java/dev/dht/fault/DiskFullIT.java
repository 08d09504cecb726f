package dev.dht.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Disk full: one node process ({@code target/dht.jar}) whose data dir is an 8 MB tmpfs, with
 * {@code dht.storage.min-free-space=3MB}. A filler file takes the space; writes must then be refused cleanly
 * (503, a one-line body, no hang, the process alive), reads served, and once the filler is deleted writes succeed
 * again, with every acknowledged write readable, also after a {@code kill -9} and restart. Needs root for
 * {@code mount -t tmpfs} (CI runs as root); skipped otherwise. Figures go to RELIABILITY.md's "Faults" table.
 */
class DiskFullIT {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final long RESERVE = 3L << 20;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Path mountPoint;
    private boolean mounted;
    private NodeProcess node;

    @AfterEach
    void cleanUp() throws Exception {
        if (node != null) {
            node.kill();
        }
        if (mounted) {
            run("umount", mountPoint.toString());
        }
        if (mountPoint != null) {
            Files.deleteIfExists(mountPoint);
        }
    }

    @Test
    void writesAreRefusedCleanlyOnAFullDiskReadsAreServedAndWritesResumeWhenSpaceReturns() throws Exception {
        mountPoint = Files.createTempDirectory("dht-disk-full");
        String uid = run("id", "-u");
        assumeTrue(uid != null && uid.trim().equals("0"), "needs root to mount a tmpfs");
        mounted = run("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint.toString()) != null;
        assumeTrue(mounted, "mount -t tmpfs failed (no privilege in this container?)");
        Path dataDir = mountPoint.resolve("data");
        int port = NodeProcess.freePort();
        URI self = URI.create("http://localhost:" + port);
        Path log = Files.createTempFile("dht-disk-full", ".log");
        List<String> args = List.of("--dht.self=" + self, "--dht.nodes=" + self, "--dht.cluster-secret=disk-full",
                "--dht.storage.min-free-space=" + (RESERVE >> 20) + "MB");
        node = startNode(port, dataDir, log, args);

        Map<String, String> acknowledged = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            String value = "before-" + i + "-" + "x".repeat(10_000);
            assertThat(put(self, "before-" + i, value).statusCode()).isEqualTo(201);
            acknowledged.put("before-" + i, value);
        }

        Path filler = mountPoint.resolve("filler");
        long usable = Files.getFileStore(mountPoint).getUsableSpace();
        fill(filler, usable - (1L << 20)); // leave 1 MB: below the reserve
        long usableWhenFull = Files.getFileStore(mountPoint).getUsableSpace();
        assertThat(usableWhenFull).as("usable bytes after filling").isLessThan(RESERVE);

        List<Integer> refusals = new ArrayList<>();
        long slowestRefusalMillis = 0;
        for (int i = 0; i < 20; i++) {
            long started = System.nanoTime();
            HttpResponse<String> refused = put(self, "refused-" + i, "y".repeat(10_000));
            slowestRefusalMillis = Math.max(slowestRefusalMillis, (System.nanoTime() - started) / 1_000_000);
            refusals.add(refused.statusCode());
            assertThat(refused.statusCode()).as("a write on a full disk").isIn(503, 507);
            assertThat(refused.body()).as("one line, no stack trace").contains("storage full")
                    .doesNotContain("Exception").hasLineCount(1);
        }
        assertThat(node.isAlive()).as("the node survived the full disk").isTrue();
        for (Map.Entry<String, String> entry : acknowledged.entrySet()) {
            HttpResponse<String> read = get(self, entry.getKey());
            assertThat(read.statusCode()).as("a read on a full disk").isEqualTo(200);
            assertThat(read.body()).isEqualTo(entry.getValue());
        }
        assertThat(get(self, "refused-0").statusCode()).as("a refused write left nothing").isEqualTo(404);

        Files.delete(filler);
        long freed = System.nanoTime();
        long deadline = freed + TimeUnit.SECONDS.toNanos(60);
        int firstAfter;
        while ((firstAfter = put(self, "after-0", "after-0").statusCode()) != 201) {
            assertThat(System.nanoTime()).as("a write succeeds within 60 s of freeing space, last %d", firstAfter)
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
        long resumedMillis = (System.nanoTime() - freed) / 1_000_000;
        acknowledged.put("after-0", "after-0");
        for (int i = 1; i < 20; i++) {
            String value = "after-" + i + "-" + "z".repeat(10_000);
            assertThat(put(self, "after-" + i, value).statusCode()).isEqualTo(201);
            acknowledged.put("after-" + i, value);
        }

        node.kill();
        node = startNode(port, dataDir, log, args);
        int lost = 0;
        for (Map.Entry<String, String> entry : acknowledged.entrySet()) {
            HttpResponse<String> read = get(self, entry.getKey());
            if (read.statusCode() != 200 || !read.body().equals(entry.getValue())) {
                lost++;
            }
        }
        assertThat(lost).as("acknowledged writes lost after kill -9 and restart").isZero();

        ReliabilityReport.row("disk-full", "disk full (8 MB tmpfs data dir, dht.storage.min-free-space=3MB, 1 node)",
                acknowledged.size() + " writes acknowledged (20 before filling, 20 after freeing); full ("
                        + usableWhenFull + " bytes usable): " + refusals.size() + " PUTs answered "
                        + refusals.stream().distinct().toList() + ", slowest " + slowestRefusalMillis
                        + " ms, 20 reads 200; first write " + resumedMillis + " ms after deleting the filler",
                "node alive, 0 acknowledged writes lost (read back after kill -9 and restart)");
    }

    private static NodeProcess startNode(int port, Path dataDir, Path log, List<String> args)
            throws IOException, InterruptedException {
        return NodeProcess.startUp(port, dataDir, log, List.of("-Xmx256m"), STARTUP, args.toArray(String[]::new));
    }

    /** Writes zeros to {@code file} until it holds {@code bytes} or the file system is full. */
    private static void fill(Path file, long bytes) throws IOException {
        byte[] block = new byte[64 * 1024];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(file)) {
            while (written < bytes) {
                int length = (int) Math.min(block.length, bytes - written);
                out.write(block, 0, length);
                written += length;
            }
        } catch (IOException full) {
            // the file system is full: that is what the filler is for
        }
    }

    private static HttpResponse<String> put(URI node, String id, String value) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(node.resolve("/v0/entity?id=" + id)).timeout(REQUEST_TIMEOUT)
                .PUT(HttpRequest.BodyPublishers.ofString(value)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> get(URI node, String id) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(node.resolve("/v0/entity?id=" + id)).timeout(REQUEST_TIMEOUT).GET()
                .build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    /** Runs a command; its output, or null if it failed. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return process.waitFor() == 0 ? output : null;
    }
}
