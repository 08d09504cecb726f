package dev.dht.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CPU priority of single Linux threads: their nice value (0 = as the rest of the JVM, 19 = lowest), set with
 * {@code renice} on their thread ids, as RocksDB's {@code Env::LowerThreadPoolCPUPriority} does for its background
 * threads. A thread at nice 19 gets the CPU when the others leave it idle, and little of it while they want it (a
 * CFS weight of 15 against 1 024). Raising a nice value needs no privilege. Linux only: elsewhere (no
 * {@code /proc}, no {@code renice}) each method does nothing and says so in one log line. Blocks for the few
 * milliseconds a {@code renice} process takes.
 */
public final class ThreadPriority {
    private static final Logger LOG = LoggerFactory.getLogger(ThreadPriority.class);
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");

    private ThreadPriority() {
    }

    /**
     * Gives the calling thread nice value {@code nice}, for the rest of its life.
     *
     * @param what what the thread does, for the log line
     * @return whether the nice value was set
     * @throws IllegalArgumentException if {@code nice} is outside 0..19
     */
    public static boolean lowerCurrentThread(int nice, String what) {
        checkNice(nice);
        Optional<String> id = currentThreadId();
        if (id.isEmpty()) {
            LOG.info("{}: no /proc/thread-self, so the thread's priority is left as is", what);
            return false;
        }
        return renice(List.of(id.get()), nice, what);
    }

    /**
     * Gives the Linux threads {@code threadIds} (of this process) nice value {@code nice}.
     *
     * @param what what the threads do, for the log lines
     * @return whether the nice value was set
     * @throws IllegalArgumentException if {@code nice} is outside 0..19
     */
    public static boolean renice(List<String> threadIds, int nice, String what) {
        checkNice(nice);
        List<String> command = new ArrayList<>(List.of("renice", "-n", Integer.toString(nice), "-p"));
        command.addAll(threadIds);
        try {
            Process renice = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(renice.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!renice.waitFor(10, TimeUnit.SECONDS) || renice.exitValue() != 0) {
                LOG.warn("{}: renice of Linux threads {} failed: {}", what, threadIds, output);
                return false;
            }
        } catch (IOException e) {
            LOG.warn("{}: cannot run renice for Linux threads {}: {}", what, threadIds, e.toString());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        LOG.info("{} (Linux threads {}) at nice {}: yields the CPU to requests", what, threadIds, nice);
        return true;
    }

    /**
     * A factory of daemon threads named {@code prefix-1}, {@code prefix-2}, ... that first give themselves nice value
     * {@code nice} ({@link #lowerCurrentThread}; 0: they keep the JVM's), so that work handed to them yields the CPU
     * to requests.
     *
     * @throws IllegalArgumentException if {@code nice} is outside 0..19
     */
    public static ThreadFactory threadFactory(String prefix, int nice) {
        checkNice(nice);
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(() -> {
                if (nice > 0) {
                    lowerCurrentThread(nice, Thread.currentThread().getName());
                }
                task.run();
            }, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** The calling thread's Linux thread id, from {@code /proc/thread-self} ({@code PID/task/TID}); empty elsewhere. */
    static Optional<String> currentThreadId() {
        try {
            return Optional.of(Files.readSymbolicLink(THREAD_SELF).getFileName().toString());
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }

    /**
     * Checks a nice value given in a setting.
     *
     * @throws IllegalArgumentException if {@code nice} is outside 0..19 (a node then does not start)
     */
    public static void checkNice(int nice) {
        if (nice < 0 || nice > 19) {
            throw new IllegalArgumentException("nice must be 0..19, was " + nice);
        }
    }
}
