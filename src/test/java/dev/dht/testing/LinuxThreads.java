package dev.dht.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What Linux says of this process's threads, for tests of thread priorities. */
public final class LinuxThreads {
    private LinuxThreads() {
    }

    /** The ids of this process's threads whose Linux name starts with {@code prefix}. */
    public static List<String> idsNamed(String prefix) throws IOException {
        List<String> ids = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).startsWith(prefix)) {
                        ids.add(task.getFileName().toString());
                    }
                } catch (IOException ended) {
                    // the thread ended while listing
                }
            }
        }
        return ids;
    }

    /** The nice value of thread {@code tid}: field 19 of {@code /proc/self/task/<tid>/stat}, after the name. */
    public static int niceOf(String tid) throws IOException {
        String stat = Files.readString(Path.of("/proc/self/task", tid, "stat"), StandardCharsets.UTF_8);
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Integer.parseInt(fields[16]);
    }
}
