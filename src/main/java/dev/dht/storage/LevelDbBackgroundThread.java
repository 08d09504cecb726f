package dev.dht.storage;

import dev.dht.node.ThreadPriority;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one native thread on which leveldbjni's LevelDB flushes memtables and compacts, for every database of the
 * process (LevelDB's {@code PosixEnv} starts it on the first compaction it schedules), and its CPU priority:
 * {@link #lowerPriority} gives it a higher nice value ({@code dht.storage.compaction-nice}), as RocksDB's
 * {@code Env::LowerThreadPoolCPUPriority} does, so that compactions take the CPU when requests leave it idle. Why
 * that is off by default: docs/performance.md, "LevelDbBackgroundThread".
 *
 * <p>How the thread is found: a new Linux thread inherits the name ({@code /proc/<pid>/task/<tid>/comm}) of the
 * thread that creates it. {@link #open} opens the process's first JNI database on a Java thread named
 * {@value #NAME} and there forces a memtable flush, so LevelDB's background thread is born with that name; after
 * that Java thread has ended it is the only thread so named. Linux only; elsewhere, or with the pure-Java engine
 * (whose compactions run on a Java thread), the priority is left as it is.
 */
public final class LevelDbBackgroundThread {
    /** The Linux thread name LevelDB's background thread is born with (at most 15 characters). */
    public static final String NAME = "leveldb-compact";

    private static final Logger log = LoggerFactory.getLogger(LevelDbBackgroundThread.class);
    private static final Path TASKS = Path.of("/proc/self/task");
    private static boolean born;

    private LevelDbBackgroundThread() {
    }

    /**
     * Opens a leveldbjni database. The first call in the process runs the open on a thread named {@value #NAME},
     * followed by a flush of the (empty) memtable, so that LevelDB's background thread is created by that thread;
     * later calls open on the calling thread. Blocks (disk I/O); call it off the event loops.
     *
     * @throws IOException if LevelDB cannot open the database
     */
    static synchronized DB open(File directory, Options options) throws IOException {
        if (born) {
            return StorageEngine.JNI.factory().open(directory, options);
        }
        AtomicReference<DB> opened = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread opener = new Thread(() -> {
            try {
                DB db = StorageEngine.JNI.factory().open(directory, options);
                opened.set(db);
                // DBImpl::CompactRange flushes the memtable first, which schedules the background work and so starts
                // the thread here; an empty key range compacts nothing else (no key is empty)
                db.compactRange(new byte[0], new byte[0]);
            } catch (Throwable e) {
                failed.set(e);
            }
        }, NAME);
        opener.start();
        try {
            opener.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while opening " + directory, e);
        }
        if (failed.get() != null) {
            closeQuietly(opened.get());
            Throwable cause = failed.get();
            if (cause instanceof IOException e) {
                throw e;
            }
            if (cause instanceof RuntimeException e) {
                throw e;
            }
            if (cause instanceof Error e) {
                throw e;
            }
            throw new IOException("cannot open " + directory + ": " + cause, cause);
        }
        born = true;
        return opened.get();
    }

    /**
     * Sets the nice value of LevelDB's background thread (0 = as the rest of the JVM, 19 = lowest priority;
     * {@link ThreadPriority#renice}). Blocks for the few milliseconds that takes; call it at startup, after the first
     * JNI database was opened through {@link StorageEngine#open}. Does nothing, with a log line saying why, when the
     * thread cannot be found (not Linux, no JNI database opened yet) or {@code renice} fails.
     *
     * @param nice 0 to 19
     * @return the Linux thread ids reniced (empty if none)
     * @throws IllegalArgumentException if {@code nice} is outside 0..19
     */
    public static List<String> lowerPriority(int nice) {
        ThreadPriority.checkNice(nice);
        List<String> threads = threadIds();
        if (threads.isEmpty()) {
            log.info("LevelDB's background thread not found (no /proc/self/task thread named {}); its priority is left as is",
                    NAME);
            return threads;
        }
        return ThreadPriority.renice(threads, nice, "LevelDB's background thread (flushes, compactions)")
                ? threads : List.of();
    }

    /** The ids of the threads of this process named {@value #NAME}; empty where there is no {@code /proc}. */
    static List<String> threadIds() {
        if (!Files.isDirectory(TASKS)) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(TASKS)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (NAME.equals(Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).trim())) {
                        ids.add(task.getFileName().toString());
                    }
                } catch (IOException threadEnded) {
                    // the thread ended while listing: not ours (LevelDB's lives as long as the process)
                }
            }
        } catch (IOException | UncheckedIOException e) {
            log.warn("cannot list this process's threads in {}: {}", TASKS, e.toString());
            return List.of();
        }
        return ids;
    }

    private static void closeQuietly(DB db) {
        if (db != null) {
            try {
                db.close();
            } catch (IOException | RuntimeException ignored) {
                // the open failed after it succeeded; the first error is the one reported
            }
        }
    }
}
