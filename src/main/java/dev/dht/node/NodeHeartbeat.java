package dev.dht.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's heartbeat file ({@value #FILE_NAME} in {@code dht.data-dir}), rewritten every {@link #PERIOD}: when the
 * node was last up, and a high-water mark {@link #MARGIN} ahead of its {@link HybridLogicalClock}. {@link #open}
 * refuses to start a node down longer than {@code dht.tombstone.gc-grace} unless {@code dht.rebuild} is set, saying
 * how to rebuild it (Cassandra's gc_grace_seconds rule). A restarted node never stamps a write lower than one it
 * acknowledged before, even with its wall clock set back, yet starts no further ahead than it must
 * ({@link #restartTimestamp}); why: docs/replication-and-repair.md, "Clocks and durability".
 *
 * <p>File format: text lines {@code last-up-millis N} (wall-clock ms since the epoch), {@code clock-high-water T}
 * (an HLC timestamp), {@code clock-latest T}, {@code beat-millis N} (wall-clock ms of the write) and
 * {@code clean-shutdown 0|1}; a file with only the first two (an older node) restarts above the high-water mark.
 * Written atomically (temporary file, fsync, rename), so a crash never leaves a torn file.
 *
 * <p>Threading: {@link #open}, {@link #beat} and {@link #close} block on disk I/O (start-up, the {@code heartbeat}
 * thread, context close); never call them on an event loop.
 */
public final class NodeHeartbeat implements AutoCloseable {
    /** The heartbeat file's name in {@code dht.data-dir}. */
    public static final String FILE_NAME = "dht-heartbeat";
    /** How far ahead of the clock the persisted high-water mark is. */
    public static final Duration MARGIN = Duration.ofSeconds(10);
    /** How often the file is rewritten. */
    public static final Duration PERIOD = Duration.ofSeconds(1);
    private static final Logger LOG = LoggerFactory.getLogger(NodeHeartbeat.class);

    private final Path file;
    private final Clock wallClock;
    private final HybridLogicalClock clock;
    /** The last-up time read at start-up, written again until {@link #start()}: a failed start is not "up". */
    private final long previousLastUp;
    private volatile boolean up;
    /** Set by {@link #close()}: the last write says the clock stamps nothing more; later scheduled beats do nothing. */
    private boolean closed;
    private ScheduledExecutorService executor;

    private NodeHeartbeat(Path file, Clock wallClock, HybridLogicalClock clock, long previousLastUp) {
        this.file = file;
        this.wallClock = wallClock;
        this.clock = clock;
        this.previousLastUp = previousLastUp;
    }

    /**
     * Reads the heartbeat of {@code dataDir} (none on a new node), checks how long the node was down, starts
     * the clock above the stored high-water mark and writes a fresh heartbeat. Blocks (start-up only).
     *
     * @param gcGrace   {@code dht.tombstone.gc-grace}: the longest a node may have been down
     * @param rebuild   {@code dht.rebuild}: the node starts empty and streams its data from its peers, so how
     *                  long it was down does not matter
     * @param wallClock the wall clock of the node's {@link HybridLogicalClock} (tests pass a controllable one)
     * @throws DownTooLongException if the node was last up more than {@code gcGrace} ago and {@code rebuild} is
     *                              false; start-up then stops with its message (naming {@code dht.rebuild}),
     *                              which tells the operator to rebuild the node
     * @throws UncheckedIOException    if the file cannot be read, parsed or written
     */
    public static NodeHeartbeat open(Path dataDir, Duration gcGrace, boolean rebuild, Clock wallClock) {
        Path file = dataDir.resolve(FILE_NAME);
        HybridLogicalClock clock = new HybridLogicalClock(wallClock);
        long lastUp = wallClock.millis();
        if (Files.exists(file)) {
            Stored stored = read(file);
            lastUp = stored.lastUpMillis();
            long downMillis = wallClock.millis() - lastUp;
            if (!rebuild && downMillis > gcGrace.toMillis()) {
                throw new DownTooLongException("this node was last up at "
                        + Instant.ofEpochMilli(lastUp) + ", " + Duration.ofMillis(downMillis).toSeconds()
                        + " s ago, longer than dht.tombstone.gc-grace ("
                        + gcGrace + "): its data may bring back values deleted meanwhile, whose tombstones the other"
                        + " nodes have purged. Rebuild it: wipe its data directory " + dataDir.toAbsolutePath()
                        + " and start it with --dht.rebuild=true");
            }
            clock.observe(restartTimestamp(stored, wallClock.millis()));
        }
        NodeHeartbeat heartbeat = new NodeHeartbeat(file, wallClock, clock, lastUp);
        heartbeat.beat();
        return heartbeat;
    }

    /**
     * The timestamp a restarted clock starts above (it also never starts below its wall clock):
     * <ul>
     *   <li>after a clean shutdown, the latest timestamp the clock handed out: it stamped nothing after that;</li>
     *   <li>after a crash, once the wall clock reads at least {@link #MARGIN} past the last write of the file, the
     *       latest timestamp written then: everything stamped after that write came from a wall clock that had not
     *       yet reached the margin past it (the heartbeat thread runs every {@link #PERIOD}), so it is below the
     *       wall clock now;</li>
     *   <li>otherwise (a crash and a restart within the margin, a wall clock set back, a file of an older node), the
     *       high-water mark: the one bound that holds whatever the wall clock says.</li>
     * </ul>
     * The second and third rules assume, as the high-water mark always did, that the heartbeat thread is never held
     * up for longer than the margin.
     */
    static long restartTimestamp(Stored stored, long wallMillis) {
        if (stored.clockLatest() < 0) {
            return stored.highWater();
        }
        if (stored.cleanShutdown()) {
            return stored.clockLatest();
        }
        if (wallMillis >= stored.beatMillis() + MARGIN.toMillis()) {
            return stored.clockLatest();
        }
        return stored.highWater();
    }

    /** The node clock, started as {@link #restartTimestamp} says after a restart. */
    public HybridLogicalClock clock() {
        return clock;
    }

    /**
     * Rewrites the file now: last up = the wall clock's now once {@link #start()} was called (before, the last-up
     * time read at start-up, so a node that keeps failing to start does not count as up), high-water =
     * {@link #MARGIN} beyond the latest of the clock's last timestamp and the wall clock. Blocks (fsync).
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    public synchronized void beat() {
        if (!closed) {
            write(false);
        }
    }

    private void write(boolean cleanShutdown) {
        long now = wallClock.millis();
        long latest = clock.latest();
        long highWater = Math.max(latest, HybridLogicalClock.timestampOf(now))
                + HybridLogicalClock.timestampOf(MARGIN.toMillis());
        long lastUp = up ? now : previousLastUp;
        byte[] content = ("last-up-millis " + lastUp + "\nclock-high-water " + highWater + "\nclock-latest " + latest
                + "\nbeat-millis " + now + "\nclean-shutdown " + (cleanShutdown ? 1 : 0) + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        try {
            DurableFile.replace(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Marks the node up (call it once the node serves) and rewrites the file now and then every {@link #PERIOD} on
     * a thread of its own ({@code heartbeat}); a failed scheduled write is logged. Blocks for the first write.
     */
    public synchronized void start() {
        if (executor != null) {
            throw new IllegalStateException("already started");
        }
        up = true;
        beat();
        executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "heartbeat");
            thread.setDaemon(true);
            return thread;
        });
        executor.scheduleAtFixedRate(() -> {
            try {
                beat();
            } catch (UncheckedIOException e) {
                LOG.warn("heartbeat not written: {}", e.getMessage());
            }
        }, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Stops the schedule and writes a last heartbeat that marks a clean shutdown: the clock must stamp nothing
     * after this (the node's context closes the heartbeat after everything that uses the clock). Blocks; called on
     * context close.
     */
    @Override
    public synchronized void close() {
        if (executor != null) {
            executor.shutdown();
        }
        closed = true;
        write(true);
    }

    /**
     * What a heartbeat file holds; {@code clockLatest} and {@code beatMillis} are -1 in a file of an older node.
     */
    record Stored(long lastUpMillis, long highWater, long clockLatest, long beatMillis, boolean cleanShutdown) {
    }

    private static Stored read(Path file) {
        try {
            long[] values = {0, 0, -1, -1, 0};
            String[] names = {"last-up-millis", "clock-high-water", "clock-latest", "beat-millis", "clean-shutdown"};
            int found = 0;
            for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
                String[] parts = line.trim().split(" ");
                for (int i = 0; i < names.length; i++) {
                    if (parts.length == 2 && parts[0].equals(names[i])) {
                        values[i] = Long.parseLong(parts[1]);
                        found |= 1 << i;
                    }
                }
            }
            if ((found & 3) != 3) {
                throw new IOException("expected the lines last-up-millis and clock-high-water");
            }
            return new Stored(values[0], values[1], values[2], values[3], values[4] == 1);
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot read heartbeat " + file + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
    }

    /**
     * A node down longer than {@code dht.tombstone.gc-grace} started without {@code dht.rebuild}: its data may bring
     * back deleted values. The wiring reports it as an invalid {@code dht.rebuild} setting.
     */
    public static final class DownTooLongException extends IllegalStateException {
        DownTooLongException(String message) {
            super(message);
        }
    }
}
