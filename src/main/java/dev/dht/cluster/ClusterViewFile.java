package dev.dht.cluster;

import dev.dht.node.DurableFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The {@link ClusterView} a node last stored, in {@value #FILE_NAME} in its data dir, so that a restarted node
 * (even after {@code kill -9}) knows the epoch and membership it left off with. Written atomically
 * ({@link DurableFile#replace}: a crash leaves the old or the new view, never a torn one).
 *
 * <p>Format ({@link #encode}), text lines: {@code epoch N}, {@code replication-factor N}, one
 * {@code member URL STATE} per member in order, {@code change KIND URL PHASE} while a change is in progress, and
 * {@code cluster UUID} (the cluster's id) unless it is {@link ClusterView#LEGACY_CLUSTER}: a view stored before
 * clusters had ids has none and reads as that id, and a view of that id is written as before, so nodes of the
 * version before read it during a rolling restart. Peers exchange views in the same text. Blocking file I/O:
 * start-up and membership changes only, never an event loop.
 */
public final class ClusterViewFile {
    /** The file's name in {@code dht.data-dir}. */
    public static final String FILE_NAME = "dht-cluster-view";
    /** Words per line, by the line's first word. */
    private static final Map<String, Integer> WORDS = Map.of("epoch", 2, "replication-factor", 2, "member", 3,
            "change", 4, "cluster", 2);
    private final Path file;

    /** The view file of the data dir {@code dataDir}. */
    public ClusterViewFile(Path dataDir) {
        this.file = dataDir.resolve(FILE_NAME);
    }

    /**
     * The stored view; empty if none was stored (a new data dir, or one from before views were stored).
     *
     * @throws UncheckedIOException if the file cannot be read or is malformed (the message names the file)
     */
    public Optional<ClusterView> read() {
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        try {
            return Optional.of(decode(Files.readString(file, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (RuntimeException e) {
            throw new UncheckedIOException(new IOException("malformed " + file + ": " + e.getMessage(), e));
        }
    }

    /**
     * Stores {@code view} durably (fsync'ed before it replaces the old file).
     *
     * @throws UncheckedIOException if it cannot be written
     */
    public void write(ClusterView view) {
        try {
            DurableFile.replace(file, encode(view).getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** {@code view} in the file's text format. */
    public static String encode(ClusterView view) {
        StringBuilder text = new StringBuilder()
                .append("epoch ").append(view.epoch()).append('\n')
                .append("replication-factor ").append(view.replicationFactor()).append('\n');
        for (Member member : view.members()) {
            text.append("member ").append(member.node()).append(' ').append(member.state()).append('\n');
        }
        ClusterChange change = view.change();
        if (change != null) {
            text.append("change ").append(change.kind().token()).append(' ').append(change.node()).append(' ')
                    .append(change.phase().name()).append('\n');
        }
        if (!view.cluster().equals(ClusterView.LEGACY_CLUSTER)) {
            text.append("cluster ").append(view.cluster()).append('\n');
        }
        return text.toString();
    }

    /**
     * The view written by {@link #encode}.
     *
     * @throws IllegalArgumentException if {@code text} is malformed or not a valid view
     */
    public static ClusterView decode(String text) {
        long epoch = -1;
        int replicationFactor = -1;
        List<Member> members = new ArrayList<>();
        ClusterChange change = null;
        UUID cluster = ClusterView.LEGACY_CLUSTER;
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] words = line.trim().split(" ");
            if (words.length != WORDS.getOrDefault(words[0], 0)) {
                throw new IllegalArgumentException("malformed line '" + line + "'");
            }
            switch (words[0]) {
                case "epoch" -> epoch = Long.parseLong(words[1]);
                case "replication-factor" -> replicationFactor = Integer.parseInt(words[1]);
                case "member" -> members.add(new Member(URI.create(words[1]), MemberState.valueOf(words[2])));
                case "change" -> change = new ClusterChange(ChangeKind.fromToken(words[1]), URI.create(words[2]),
                        ChangePhase.valueOf(words[3]));
                case "cluster" -> cluster = UUID.fromString(words[1]);
                default -> throw new IllegalArgumentException("unknown line '" + line + "'");
            }
        }
        return new ClusterView(epoch, replicationFactor, members, change, cluster);
    }
}
