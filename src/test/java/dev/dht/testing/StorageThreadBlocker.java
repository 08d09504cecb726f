package dev.dht.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.storage.LocalStore;
import dev.dht.storage.StorageScheduler;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a node's storage threads with tasks that wait until {@link #release()} (at most 60 s), standing in for a
 * storage that cannot keep up: requests that need storage wait in its queue meanwhile.
 */
public final class StorageThreadBlocker {
    private final StorageScheduler storage;
    private final CountDownLatch release = new CountDownLatch(1);

    /** A blocker of {@code store}'s storage threads; nothing is blocked before {@link #blockOneThread()}. */
    public StorageThreadBlocker(LocalStore store) {
        this(store.scheduler());
    }

    /** A blocker of {@code storage}'s threads; nothing is blocked before {@link #blockOneThread()}. */
    public StorageThreadBlocker(StorageScheduler storage) {
        this.storage = storage;
    }

    /** Occupies one storage thread, returning once that thread runs the waiting task. */
    public void blockOneThread() throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        storage.scheduler().schedule(() -> {
            running.countDown();
            awaitRelease();
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).as("a storage thread picked up the blocking task").isTrue();
    }

    /** Puts one more waiting task into the storage queue. */
    public void queueOneTask() {
        storage.scheduler().schedule(this::awaitRelease);
    }

    /** Lets every blocking task end. */
    public void release() {
        release.countDown();
    }

    private void awaitRelease() {
        try {
            release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
