package dev.dht.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * One keep-alive HTTP/1.1 connection on a raw socket: the test writes request bytes exactly as it wants them
 * (a body in parts, pipelined requests) and reads the answers one by one, in the order they arrive. Bodies are
 * read by {@code Content-Length} or chunked framing ({@link ChunkedResponseReader}'s parser).
 */
public final class RawHttpConnection implements Closeable {
    private final Socket socket;
    private final InputStream in;

    /** Connects to {@code localhost:port}; reads time out after 30 s. */
    public RawHttpConnection(int port) throws IOException {
        this(port, Duration.ofSeconds(30));
    }

    /** Connects to {@code localhost:port}; reads time out after {@code readTimeout}. */
    public RawHttpConnection(int port, Duration readTimeout) throws IOException {
        this.socket = new Socket("localhost", port);
        socket.setSoTimeout((int) readTimeout.toMillis());
        this.in = new BufferedInputStream(socket.getInputStream());
    }

    /** Ends this side's output (a FIN): the server sees the end of the request stream, the connection stays open. */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** Writes {@code text} (request lines, headers, body parts; CRLFs included by the caller) as ASCII. */
    public void send(String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
    }

    /** Writes {@code bytes} as they are (binary bodies, bytes outside ASCII). */
    public void send(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
    }

    /**
     * The status of the next answer, or -1 if the server closed the connection (or reset it) before one came;
     * the rest of the answer is read as {@link #read()} does. A read timeout is thrown, not taken for a close.
     */
    public int statusOrClosed() throws IOException {
        try {
            return read().status();
        } catch (EOFException | SocketException e) {
            return -1;
        }
    }

    /** Reads the next answer on the connection. */
    public Response read() throws IOException {
        int status = ChunkedResponseReader.readStatus(in);
        Map<String, String> headers = ChunkedResponseReader.readHeaders(in);
        String length = headers.get("content-length");
        byte[] body;
        if (length != null) {
            body = in.readNBytes(Integer.parseInt(length));
        } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            ByteArrayOutputStream chunks = new ByteArrayOutputStream();
            for (byte[] chunk = ChunkedResponseReader.readChunk(in); chunk != null; chunk = ChunkedResponseReader.readChunk(in)) {
                chunks.write(chunk);
            }
            body = chunks.toByteArray();
        } else {
            body = new byte[0];
        }
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    /** Whether the server closed the connection: the next read finds the end of the stream. */
    public boolean closedByServer() throws IOException {
        return in.read() < 0;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** One answer: status, headers by lower-case name, body as UTF-8. */
    public record Response(int status, Map<String, String> headers, String body) {
        /** A header by case-insensitive name, or null. */
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }
}
