package dev.dht.node;

import static dev.dht.testing.LinuxThreads.niceOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

/**
 * A thread of {@link ThreadPriority#threadFactory} runs at the nice value asked, under its name, while the thread
 * that made it keeps its own; a factory at nice 0 leaves its threads alone; a nice value outside 0..19 is refused.
 * Linux only, as the feature.
 */
class ThreadPriorityTest {
    @Test
    void aThreadOfTheFactoryRunsAtTheNiceValueAskedAndTheRestKeepTheirs() throws Exception {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux /proc");
        int before = niceOf(ThreadPriority.currentThreadId().orElseThrow());

        assertThat(niceInThreadOf(ThreadPriority.threadFactory("low", 19))).isEqualTo("low-1 19");
        assertThat(niceInThreadOf(ThreadPriority.threadFactory("same", 0))).isEqualTo("same-1 " + before);
        assertThat(niceOf(ThreadPriority.currentThreadId().orElseThrow())).isEqualTo(before);
    }

    @Test
    void aNiceValueOutsideZeroToNineteenIsRefused() {
        assertThatThrownBy(() -> ThreadPriority.threadFactory("x", 20)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ThreadPriority.lowerCurrentThread(-1, "x")).isInstanceOf(IllegalArgumentException.class);
    }

    /** "NAME NICE" of a thread of {@code factory}, read by that thread itself. */
    private static String niceInThreadOf(ThreadFactory factory) throws Exception {
        CompletableFuture<String> seen = new CompletableFuture<>();
        Thread thread = factory.newThread(() -> {
            try {
                seen.complete(Thread.currentThread().getName() + " "
                        + niceOf(ThreadPriority.currentThreadId().orElseThrow()));
            } catch (IOException | RuntimeException e) {
                seen.completeExceptionally(e);
            }
        });
        assertThat(thread.isDaemon()).isTrue();
        thread.start();
        return seen.get();
    }
}
