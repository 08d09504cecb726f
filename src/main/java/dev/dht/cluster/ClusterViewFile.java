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
import java.util.Optional;

/**
 * The {@link ClusterView} a node last stored, in {@value #FILE_NAME} in its data dir, so that a restarted node
 * (even after {@code kill -9}) knows the epoch and membership it left off with. Written atomically
 * ({@link DurableFile#replace}: a crash leaves the old or the new view, never a torn one).
 *
 * <p>Format, text lines: {@code epoch N}, {@code replication-factor N}, then one {@code member URL STATE} per
 * member in order. Blocking file I/O: start-up and membership changes only, never an event loop.
 */
public final class ClusterViewFile {
    /** The file's name in {@code dht.data-dir}. */
    public static final String FILE_NAME = "dht-cluster-view";
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
            return Optional.of(parse(Files.readAllLines(file, StandardCharsets.UTF_8)));
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
        StringBuilder text = new StringBuilder()
                .append("epoch ").append(view.epoch()).append('\n')
                .append("replication-factor ").append(view.replicationFactor()).append('\n');
        for (Member member : view.members()) {
            text.append("member ").append(member.node()).append(' ').append(member.state()).append('\n');
        }
        try {
            DurableFile.replace(file, text.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static ClusterView parse(List<String> lines) {
        long epoch = -1;
        int replicationFactor = -1;
        List<Member> members = new ArrayList<>();
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            String[] words = line.trim().split(" ");
            switch (words[0]) {
                case "epoch" -> epoch = Long.parseLong(words[1]);
                case "replication-factor" -> replicationFactor = Integer.parseInt(words[1]);
                case "member" -> members.add(new Member(URI.create(words[1]), MemberState.valueOf(words[2])));
                default -> throw new IllegalArgumentException("unknown line '" + line + "'");
            }
        }
        return new ClusterView(epoch, replicationFactor, members);
    }
}
