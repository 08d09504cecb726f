package dev.dht.node;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether this node may answer reads as a replica. A node that lost its store (an empty data dir in a running
 * cluster, or {@code dht.rebuild=true}) holds only part of its records until it has streamed them from its peers
 * ({@code dev.dht.repair.NodeRebuild}); until then its replica reads fail fast, so coordinators ask other replicas:
 * {@code GET /internal/record} answers 503 and the coordinator's in-process read of this node fails, both with
 * {@link OverloadedException} ({@link OverloadReason#REBUILDING}). Writes are accepted meanwhile.
 *
 * <p>A rebuild survives a crash: the gate of a data dir ({@link #of}) keeps a mark, {@value #MARK_FILE}, in the data
 * dir from before the first record is streamed (before the view is stored, see {@link #markPending}) until the
 * rebuild completed; a node that starts with the mark starts closed and rebuilds again, whatever its stored view
 * says. Thread-safe; {@link #isRebuilding} and {@link #checkReadable} never block, {@link #of},
 * {@link #markPending} and {@link #finish} do (a file and an fsync).
 */
public final class RebuildGate {
    /** The mark's name in {@code dht.data-dir}: present while a rebuild has yet to complete. */
    public static final String MARK_FILE = "dht-rebuild-pending";
    private final Path mark;
    private volatile boolean rebuilding;

    /** @param rebuilding true to start closed (a rebuild is about to run), false to start open; no mark is kept */
    public RebuildGate(boolean rebuilding) {
        this(null, rebuilding);
    }

    private RebuildGate(Path mark, boolean rebuilding) {
        this.mark = mark;
        this.rebuilding = rebuilding;
    }

    /** A gate that is open for good (no rebuild). */
    public static RebuildGate open() {
        return new RebuildGate(false);
    }

    /**
     * The gate of the data dir {@code dataDir}: closed if {@code rebuild} or if a rebuild left its mark there
     * unfinished (the mark is then written, or kept). Blocks on the file.
     *
     * @throws UncheckedIOException if the mark cannot be written
     */
    public static RebuildGate of(Path dataDir, boolean rebuild) {
        boolean closed = rebuild || isPending(dataDir);
        if (closed) {
            markPending(dataDir);
        }
        return new RebuildGate(dataDir.resolve(MARK_FILE), closed);
    }

    /** True if a rebuild in {@code dataDir} has yet to complete (its mark is there). */
    public static boolean isPending(Path dataDir) {
        return Files.exists(dataDir.resolve(MARK_FILE));
    }

    /**
     * Writes the mark durably (fsync'ed), so that a crash from now on leaves a node that rebuilds when it starts
     * again. Call it before anything of the rebuild reaches the data dir (the cluster view, a record). Blocks.
     *
     * @throws UncheckedIOException if it cannot be written
     */
    public static void markPending(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
            DurableFile.replace(dataDir.resolve(MARK_FILE), "rebuild pending\n".getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the rebuild mark in " + dataDir, e);
        }
    }

    /**
     * Returns normally if replica reads may be answered.
     *
     * @throws OverloadedException ({@link OverloadReason#REBUILDING}) while a rebuild runs (503 on the internal API)
     */
    public void checkReadable() {
        if (rebuilding) {
            throw refusal();
        }
    }

    /**
     * The refusal of a replica read while this node rebuilds: 503 with Retry-After on the internal API, and a
     * failed replica read that a coordinator replaces by asking another replica.
     */
    public static OverloadedException refusal() {
        return new OverloadedException(OverloadReason.REBUILDING,
                "this node is rebuilding its store and does not answer reads as a replica yet");
    }

    /** True while a rebuild runs. */
    public boolean isRebuilding() {
        return rebuilding;
    }

    /**
     * Opens the gate: the rebuild is complete and replica reads are answered from now on. Removes the mark first
     * (blocks on the file: call it off the event loops).
     *
     * @throws UncheckedIOException if the mark cannot be removed (the gate then stays closed)
     */
    public void finish() {
        if (mark != null) {
            try {
                DurableFile.delete(mark);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove the rebuild mark " + mark, e);
            }
        }
        rebuilding = false;
    }
}
