package dev.dht.peer;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node's answer to {@link PeerEndpoint#STATS}: what it stores and the hints it holds, as JSON
 * {@code {"records": N|null, "bytes": N, "hints": {URL: N, ...}}}.
 *
 * @param records records in its store, tombstones included (null until its first count ended)
 * @param bytes   its store's files on disk, bytes
 * @param hints   hints it holds, by the base URL of the peer each is for (peers with none left out)
 */
public record NodeStats(@Nullable Long records, long bytes, Map<String, Long> hints) {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    public NodeStats {
        hints = Map.copyOf(hints);
    }

    /** The JSON described above. */
    public String toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("records", records);
        json.put("bytes", bytes);
        json.put("hints", hints);
        return JSON.writeValueAsString(json);
    }

    /**
     * Reads the JSON described above.
     *
     * @throws IllegalArgumentException if it is malformed
     */
    public static NodeStats fromJson(String text) {
        try {
            JsonNode json = JSON.readTree(text);
            JsonNode records = json.path("records");
            Map<String, Long> hints = new LinkedHashMap<>();
            json.path("hints").properties().forEach(entry -> hints.put(entry.getKey(), entry.getValue().asLong()));
            return new NodeStats(records.isNumber() ? records.asLong() : null, json.path("bytes").asLong(), hints);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("malformed node stats: " + e.getOriginalMessage(), e);
        }
    }
}
