package dev.dht.membership;

import dev.dht.node.DurableFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How far this node got pulling the records it gains in one change ({@value #FILE_NAME} in the data dir): per
 * source node and pass (its records, then its digests; see {@link RecordStreaming}), the last key stored, so a node
 * killed mid-stream and restarted asks each source only for the keys after it. Each source sends in key order and
 * the checkpoint is written only after the records before it are stored, so nothing is skipped. Kept for the
 * streaming epoch it names; another epoch starts afresh.
 *
 * <p>Format, text lines: {@code epoch N}, then {@code PASS URL KEY}, the pass {@code source} (the records) or
 * {@code digests}, with the key in unpadded base64url ({@code -} for none yet) and {@code done} appended once that
 * stream finished. Blocking file I/O: call off event loops. Thread-safe: the streams of several sources record
 * their progress in it at once.
 */
final class StreamProgress {
    /** The file's name in {@code dht.data-dir}. */
    static final String FILE_NAME = "dht-stream-progress";
    private static final String RECORDS = "source";
    private static final String DIGESTS = "digests";
    private final Path file;
    private final long epoch;
    /** Keyed by pass and source URL, e.g. {@code source http://a:8080}. */
    private final Map<String, byte[]> lastKeys = new LinkedHashMap<>();
    private final Map<String, Boolean> done = new LinkedHashMap<>();

    private StreamProgress(Path file, long epoch) {
        this.file = file;
        this.epoch = epoch;
    }

    /** The progress stored in {@code dataDir} for {@code epoch}, or none if it is absent or of another epoch. */
    static StreamProgress load(Path dataDir, long epoch) {
        StreamProgress progress = new StreamProgress(dataDir.resolve(FILE_NAME), epoch);
        if (!Files.exists(progress.file)) {
            return progress;
        }
        try {
            String[] lines = Files.readString(progress.file, StandardCharsets.UTF_8).split("\n");
            if (lines.length == 0 || !lines[0].equals("epoch " + epoch)) {
                return progress;
            }
            for (int i = 1; i < lines.length; i++) {
                String[] words = lines[i].split(" ");
                if (words.length >= 3 && (words[0].equals(RECORDS) || words[0].equals(DIGESTS))) {
                    String source = words[0] + " " + words[1];
                    progress.lastKeys.put(source, words[2].equals("-") ? null : Base64.getUrlDecoder().decode(words[2]));
                    progress.done.put(source, words.length > 3 && words[3].equals("done"));
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            return new StreamProgress(progress.file, epoch); // unreadable: stream everything again, which is safe
        }
        return progress;
    }

    /** The stream of {@code source}'s records ({@code digests} false) or digests, as this file names it. */
    static String stream(URI source, boolean digests) {
        return (digests ? DIGESTS : RECORDS) + " " + source;
    }

    /** The last key stored from {@code stream} (see {@link #stream}), or null to start from the first. */
    synchronized byte[] after(String stream) {
        return lastKeys.get(stream);
    }

    /** True if everything {@code stream} had to send is stored. */
    synchronized boolean isDone(String stream) {
        return done.getOrDefault(stream, false);
    }

    /** Records that every key of {@code stream} up to {@code lastKey} is stored, durably. */
    synchronized void stored(String stream, byte[] lastKey) {
        lastKeys.put(stream, lastKey);
        write();
    }

    /** Records that {@code stream} finished, durably. */
    synchronized void finished(String stream) {
        lastKeys.putIfAbsent(stream, null);
        done.put(stream, true);
        write();
    }

    private void write() {
        StringBuilder text = new StringBuilder("epoch ").append(epoch).append('\n');
        for (Map.Entry<String, byte[]> entry : lastKeys.entrySet()) {
            byte[] key = entry.getValue();
            text.append(entry.getKey()).append(' ')
                    .append(key == null ? "-" : Base64.getUrlEncoder().withoutPadding().encodeToString(key))
                    .append(done.getOrDefault(entry.getKey(), false) ? " done" : "").append('\n');
        }
        try {
            DurableFile.replace(file, text.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
