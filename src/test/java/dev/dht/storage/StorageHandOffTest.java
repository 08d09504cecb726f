package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import dev.dht.testing.StorageThreadBlocker;
import reactor.core.Disposable;

/**
 * The hand-off of storage work from event loops: the calls of one loop turn travel as one storage task and complete
 * on their loop; elsewhere a call goes alone; a refused task fails its calls with 503's exception.
 */
class StorageHandOffTest {
    private final EventLoop loop = new DefaultEventLoop();
    private StorageThreadBlocker blocker;

    @BeforeEach
    void startLoop() throws Exception {
        onLoop(() -> null);
    }

    @AfterEach
    void stopLoop() {
        if (blocker != null) {
            blocker.release();
        }
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void callsOfOneLoopTurnGoAsOneStorageTaskAndCompleteOnTheLoop() throws Exception {
        // one storage thread, held, and room for one waiting task: a call handed off alone would have its own task,
        // so the 2nd to 20th of this turn would be refused
        try (StorageScheduler storage = new StorageScheduler(1, 1, "test-storage")) {
            holdTheStorageThread(storage);
            StorageHandOff handOff = new StorageHandOff(storage);
            Thread loopThread = onLoop(Thread::currentThread);
            List<CompletableFuture<Thread>> completedOn = new ArrayList<>();
            List<CompletableFuture<Integer>> results = new ArrayList<>();
            onLoop(() -> {
                for (int i = 0; i < 20; i++) {
                    int n = i;
                    CompletableFuture<Thread> thread = new CompletableFuture<>();
                    completedOn.add(thread);
                    results.add(handOff.call(() -> n * n).doOnNext(ignored -> thread.complete(Thread.currentThread())).toFuture());
                }
                return null;
            });
            blocker.release();
            for (int i = 0; i < 20; i++) {
                assertThat(results.get(i).get(5, TimeUnit.SECONDS)).isEqualTo(i * i);
                assertThat(completedOn.get(i).get()).isSameAs(loopThread);
            }
            assertThat(storage.rejections()).isZero();
        }
    }

    @Test
    void callsOfLaterTurnsGoInTasksOfTheirOwn() throws Exception {
        try (StorageScheduler storage = new StorageScheduler(1, 1, "test-storage")) {
            holdTheStorageThread(storage);
            StorageHandOff handOff = new StorageHandOff(storage);
            CompletableFuture<String> first = onLoop(() -> handOff.call(() -> "first").toFuture());
            CompletableFuture<String> second = onLoop(() -> handOff.call(() -> "second").toFuture());
            assertThat(second).failsWithin(5, TimeUnit.SECONDS).withThrowableOfType(Exception.class)
                    .withCauseInstanceOf(RejectedExecutionException.class);
            blocker.release();
            assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo("first");
            assertThat(storage.rejections()).isEqualTo(1);
        }
    }

    @Test
    void aRefusedTurnFailsEachOfItsCalls() throws Exception {
        try (StorageScheduler storage = new StorageScheduler(1, 1, "test-storage")) {
            holdTheStorageThread(storage);
            blocker.queueOneTask(); // the queue's one place is taken
            StorageHandOff handOff = new StorageHandOff(storage);
            AtomicInteger ran = new AtomicInteger();
            List<CompletableFuture<Integer>> calls = onLoop(() -> List.of(
                    handOff.call(ran::incrementAndGet).toFuture(),
                    handOff.call(ran::incrementAndGet).toFuture()));
            for (CompletableFuture<Integer> call : calls) {
                assertThat(call).failsWithin(5, TimeUnit.SECONDS).withThrowableOfType(Exception.class)
                        .withCauseInstanceOf(RejectedExecutionException.class);
            }
            blocker.release();
            assertThat(ran).hasValue(0);
        }
    }

    @Test
    void aFailingCallFailsAloneAndNullIsEmpty() throws Exception {
        try (StorageScheduler storage = new StorageScheduler(1, 4, "test-storage")) {
            StorageHandOff handOff = new StorageHandOff(storage);
            List<CompletableFuture<String>> calls = onLoop(() -> List.of(
                    handOff.<String>call(() -> {
                        throw new IllegalStateException("disk on fire");
                    }).toFuture(),
                    handOff.call(() -> (String) null).defaultIfEmpty("empty").toFuture(),
                    handOff.call(() -> "value").toFuture()));
            assertThat(calls.get(0)).failsWithin(5, TimeUnit.SECONDS).withThrowableOfType(Exception.class)
                    .withCauseInstanceOf(IllegalStateException.class).withMessageContaining("disk on fire");
            assertThat(calls.get(1).get(5, TimeUnit.SECONDS)).isEqualTo("empty");
            assertThat(calls.get(2).get(5, TimeUnit.SECONDS)).isEqualTo("value");
        }
    }

    @Test
    void aCallCancelledBeforeItsTurnRunsIsSkipped() throws Exception {
        try (StorageScheduler storage = new StorageScheduler(1, 4, "test-storage")) {
            holdTheStorageThread(storage);
            StorageHandOff handOff = new StorageHandOff(storage);
            AtomicInteger ran = new AtomicInteger();
            CompletableFuture<Integer> kept = onLoop(() -> {
                Disposable cancelled = handOff.call(ran::incrementAndGet).subscribe();
                cancelled.dispose();
                return handOff.call(() -> 42).toFuture();
            });
            blocker.release();
            assertThat(kept.get(5, TimeUnit.SECONDS)).isEqualTo(42);
            assertThat(ran).as("work of the cancelled call").hasValue(0);
        }
    }

    @Test
    void aCallSubscribedOffAnyLoopCompletesOnAStorageThread() {
        try (StorageScheduler storage = new StorageScheduler(2, 4, "test-storage")) {
            StorageHandOff handOff = new StorageHandOff(storage);
            String thread = handOff.call(() -> "x").map(ignored -> Thread.currentThread().getName())
                    .block(Duration.ofSeconds(5));
            assertThat(thread).startsWith("test-storage-");
        }
    }

    private void holdTheStorageThread(StorageScheduler storage) throws InterruptedException {
        blocker = new StorageThreadBlocker(storage);
        blocker.blockOneThread();
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(5, TimeUnit.SECONDS);
    }
}
