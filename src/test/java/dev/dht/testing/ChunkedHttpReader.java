package dev.dht.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A raw HTTP/1.1 GET over a socket that keeps the chunk boundaries of a {@code Transfer-Encoding: chunked}
 * body, as course clients read {@code /v0/entities}. Chunks are read one at a time, so a test controls how
 * fast the body is consumed. A body cut off before its terminating zero-length chunk fails with
 * {@link EOFException}.
 */
public final class ChunkedHttpReader implements Closeable {
    private final Socket socket;
    private final InputStream in;
    private final int status;
    private final Map<String, String> headers = new HashMap<>();
    private boolean finished;

    private ChunkedHttpReader(URI uri) throws IOException {
        socket = new Socket(uri.getHost(), uri.getPort());
        socket.setSoTimeout(30_000);
        OutputStream out = socket.getOutputStream();
        String target = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        out.write(("GET " + target + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        in = new BufferedInputStream(socket.getInputStream(), 4096);
        String statusLine = line();
        status = Integer.parseInt(statusLine.split(" ")[1]);
        for (String header = line(); !header.isEmpty(); header = line()) {
            int colon = header.indexOf(':');
            headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
        }
    }

    /** Sends the request and reads the status line and headers. */
    public static ChunkedHttpReader open(URI uri) throws IOException {
        return new ChunkedHttpReader(uri);
    }

    /** GETs {@code uri} and reads the whole chunked body; fails if it is cut off. */
    public static List<byte[]> readAllChunks(URI uri) throws IOException {
        try (ChunkedHttpReader reader = open(uri)) {
            if (reader.status() != 200) {
                throw new IOException("status " + reader.status());
            }
            return reader.remainingChunks();
        }
    }

    /** The response status. */
    public int status() {
        return status;
    }

    /** A response header (name in any case), or null. */
    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }

    /**
     * The next chunk's bytes, or null after the terminating chunk.
     *
     * @throws EOFException if the connection ends before the terminating chunk
     */
    public byte[] nextChunk() throws IOException {
        if (finished) {
            return null;
        }
        if (!"chunked".equalsIgnoreCase(header("transfer-encoding"))) {
            throw new IOException("not a chunked response: " + headers);
        }
        String sizeLine = line();
        int semicolon = sizeLine.indexOf(';');
        int size = Integer.parseInt(semicolon < 0 ? sizeLine.trim() : sizeLine.substring(0, semicolon).trim(), 16);
        if (size == 0) {
            line();
            finished = true;
            return null;
        }
        byte[] chunk = in.readNBytes(size);
        if (chunk.length < size) {
            throw new EOFException("body cut off inside a chunk");
        }
        if (!line().isEmpty()) {
            throw new IOException("chunk not followed by CRLF");
        }
        return chunk;
    }

    /** All chunks up to the terminating one. */
    public List<byte[]> remainingChunks() throws IOException {
        List<byte[]> chunks = new ArrayList<>();
        for (byte[] chunk = nextChunk(); chunk != null; chunk = nextChunk()) {
            chunks.add(chunk);
        }
        return chunks;
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new EOFException("connection closed before the end of the response");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
