package dev.dht.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A TCP front for an HTTP/1.1 server that answers {@code 500 Internal Server Error} to the requests a test picks
 * and passes everything else through byte for byte (headers included, so request signatures stay valid). It reads
 * each request head of a connection, forwards it with its {@code Content-Length} body, and relays the server's
 * answers back on a thread of their own; a picked request gets its body read and dropped, a 500 with
 * {@code Connection: close}, and its connection closed. Requests must carry a {@code Content-Length} when they have
 * a body (the AWS SDK's do). Daemon threads, one pair per connection; {@link #close()} stops accepting.
 */
public final class FailingHttpFront implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Predicate<String> failing;
    private final AtomicInteger failed = new AtomicInteger();

    private FailingHttpFront(ServerSocket server, InetSocketAddress target, Predicate<String> failing) {
        this.server = server;
        this.target = target;
        this.failing = failing;
    }

    /**
     * Starts a front on a free loopback port for {@code target}.
     *
     * @param failing given each request head (request line and headers, lines ending in CRLF), true to answer it
     *                with 500; called on the connection's threads
     */
    public static FailingHttpFront start(URI target, Predicate<String> failing) throws IOException {
        ServerSocket server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        FailingHttpFront front = new FailingHttpFront(server,
                new InetSocketAddress(target.getHost(), target.getPort()), failing);
        daemon("front-accept", front::accept);
        return front;
    }

    /** {@code http://127.0.0.1:PORT} of the front. */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /** How many requests were answered with 500 so far. */
    public int failed() {
        return failed.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                daemon("front-connection", () -> serve(client));
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void serve(Socket client) {
        try (client; Socket upstream = new Socket()) {
            upstream.connect(target, 5_000);
            InputStream fromServer = upstream.getInputStream();
            OutputStream toClient = client.getOutputStream();
            daemon("front-answers", () -> {
                try {
                    fromServer.transferTo(toClient);
                } catch (IOException closed) {
                    // the connection ended
                }
            });
            InputStream in = client.getInputStream();
            OutputStream toServer = upstream.getOutputStream();
            while (true) {
                byte[] head = readHead(in);
                if (head == null) {
                    return;
                }
                String text = new String(head, StandardCharsets.ISO_8859_1);
                long length = contentLength(text);
                if (failing.test(text)) {
                    if (!text.toLowerCase(Locale.ROOT).contains("\nexpect: 100-continue")) {
                        in.skipNBytes(length);
                    }
                    failed.incrementAndGet();
                    byte[] body = "<Error><Code>InternalError</Code><Message>injected</Message></Error>"
                            .getBytes(StandardCharsets.UTF_8);
                    toClient.write(("HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\n"
                            + "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
                    toClient.write(body);
                    toClient.flush();
                    return;
                }
                toServer.write(head);
                copy(in, toServer, length);
                toServer.flush();
            }
        } catch (IOException closed) {
            // either side went away: the connection ends
        }
    }

    /** The request head up to and including its blank line, or null at the end of the stream. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            matched = b == (matched % 2 == 0 ? '\r' : '\n') ? matched + 1 : b == '\r' ? 1 : 0;
            if (matched == 4) {
                return head.toByteArray();
            }
        }
        return null;
    }

    private static long contentLength(String head) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("Content-Length")) {
                return Long.parseLong(line.substring(colon + 1).trim());
            }
        }
        return 0;
    }

    private static void copy(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long left = length;
        while (left > 0) {
            int read = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (read < 0) {
                throw new IOException("the client closed within a body");
            }
            out.write(buffer, 0, read);
            left -= read;
        }
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
