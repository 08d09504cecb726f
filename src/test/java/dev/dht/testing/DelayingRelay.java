package dev.dht.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP relay that slows a link without tc netem (for kernels without sch_netem): it listens on one address,
 * forwards each connection to a target, and holds every chunk it reads for the current delay before writing it
 * on, in each direction, keeping the order of each direction and serving connections independently (a reader
 * and a writer thread per direction, the chunks queued between them with the time each is due). Runs as its own
 * process so that {@code ip netns exec} can put it into a node's network namespace:
 * {@code java -cp target/test-classes dev.dht.testing.DelayingRelay LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT}.
 * It prints {@code listening} once bound; each line on stdin sets the delay in ms (0 at start), acknowledged with
 * {@code delay N ms}; it exits when stdin closes, so it does not outlive the test that started it.
 */
public final class DelayingRelay {
    private static volatile long delayNanos;

    private DelayingRelay() {
    }

    /** Relays until stdin closes; see the class comment for the arguments. */
    public static void main(String[] args) throws IOException {
        InetSocketAddress target = new InetSocketAddress(args[2], Integer.parseInt(args[3]));
        ServerSocket server = new ServerSocket();
        server.bind(new InetSocketAddress(args[0], Integer.parseInt(args[1])), 256);
        Thread control = new Thread(DelayingRelay::readDelays, "relay-control");
        control.setDaemon(true);
        control.start();
        System.out.println("listening");
        System.out.flush();
        while (true) {
            Socket client = server.accept();
            start("relay-connect", () -> connect(client, target));
        }
    }

    private static void readDelays() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isBlank()) {
                    long millis = Long.parseLong(line.trim());
                    delayNanos = TimeUnit.MILLISECONDS.toNanos(millis);
                    System.out.println("delay " + millis + " ms");
                    System.out.flush();
                }
            }
        } catch (IOException | NumberFormatException e) {
            System.out.println("control failed: " + e);
        }
        System.exit(0);
    }

    private static void connect(Socket client, InetSocketAddress target) {
        Socket upstream = new Socket();
        try {
            upstream.connect(target, 5_000);
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            pipe(client, upstream);
            pipe(upstream, client);
        } catch (IOException e) {
            closeBoth(client, upstream);
        }
    }

    /** Relays {@code from}'s input to {@code to}'s output, each chunk held for the delay current when it arrived. */
    private static void pipe(Socket from, Socket to) throws IOException {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        start("relay-read", () -> {
            byte[] buffer = new byte[64 * 1024];
            try {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    chunks.add(new Chunk(Arrays.copyOf(buffer, read), System.nanoTime() + delayNanos));
                }
            } catch (IOException closed) {
                // the connection failed or the other direction closed it: end this direction as well
            }
            chunks.add(new Chunk(null, System.nanoTime() + delayNanos));
        });
        start("relay-write", () -> {
            try {
                while (true) {
                    Chunk chunk = chunks.take();
                    long wait = chunk.due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    if (chunk.data == null) {
                        to.shutdownOutput();
                        if (from.isOutputShutdown()) {
                            closeBoth(from, to);
                        }
                        return;
                    }
                    out.write(chunk.data);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                closeBoth(from, to);
            }
        });
    }

    private static void closeBoth(Socket one, Socket other) {
        try {
            one.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            other.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void start(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private record Chunk(byte[] data, long due) {
    }
}
