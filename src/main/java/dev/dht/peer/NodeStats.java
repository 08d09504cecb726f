package dev.dht.peer;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A node's answer to {@link PeerEndpoint#STATS}: what it stores and the hints it holds, as text lines
 * {@code records N} ({@code records ?} until its first count ended), {@code bytes N} and one {@code hints URL N} per
 * peer it holds hints for. Text rather than JSON: the probe's first answer must not wait for a JSON mapper's start.
 *
 * @param records records in its store, tombstones included (null until its first count ended)
 * @param bytes   its store's files on disk, bytes
 * @param hints   hints it holds, by the base URL of the peer each is for (peers with none left out)
 */
public record NodeStats(@Nullable Long records, long bytes, Map<String, Long> hints) {

    public NodeStats {
        hints = Map.copyOf(hints);
    }

    /** The text described above. */
    public String encode() {
        StringBuilder text = new StringBuilder();
        text.append("records ").append(records == null ? "?" : records.toString()).append('\n');
        text.append("bytes ").append(bytes).append('\n');
        hints.forEach((peer, count) -> text.append("hints ").append(peer).append(' ').append(count).append('\n'));
        return text.toString();
    }

    /**
     * Reads the text described above; unknown lines are skipped (a newer node's additions).
     *
     * @throws IllegalArgumentException if a known line is malformed or {@code bytes} is missing
     */
    public static NodeStats decode(String text) {
        Long records = null;
        Long bytes = null;
        Map<String, Long> hints = new LinkedHashMap<>();
        try {
            for (String line : text.split("\n")) {
                String[] parts = line.strip().split(" ");
                switch (parts[0]) {
                    case "records" -> records = parts[1].equals("?") ? null : Long.parseLong(parts[1]);
                    case "bytes" -> bytes = Long.parseLong(parts[1]);
                    case "hints" -> hints.put(parts[1], Long.parseLong(parts[2]));
                    default -> { }
                }
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            throw new IllegalArgumentException("malformed node stats: " + e.getMessage(), e);
        }
        if (bytes == null) {
            throw new IllegalArgumentException("malformed node stats: no bytes line");
        }
        return new NodeStats(records, bytes, hints);
    }
}
