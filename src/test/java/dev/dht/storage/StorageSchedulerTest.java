package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The storage pool: bounded queue with prompt rejection, and a cancel never interrupts a storage thread
 * (an interrupt would close the pure-Java engine's file channels for good).
 */
class StorageSchedulerTest {

    @Test
    void cancellingARunningStorageCallDoesNotInterruptItsThread() throws InterruptedException {
        try (StorageScheduler storage = new StorageScheduler(1, 4, "test-storage")) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch finished = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            Disposable call = Mono.fromCallable(() -> {
                started.countDown();
                long end = System.nanoTime() + 300_000_000L;
                while (System.nanoTime() < end) {
                    if (Thread.currentThread().isInterrupted()) {
                        interrupted.set(true);
                    }
                }
                finished.countDown();
                return "done";
            }).subscribeOn(storage.scheduler()).subscribe();
            assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
            call.dispose();
            assertThat(finished.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(interrupted).as("storage thread interrupted by a cancel").isFalse();
        }
    }

    @Test
    void aFullQueueRejectsAtOnce() throws InterruptedException {
        try (StorageScheduler storage = new StorageScheduler(1, 1, "test-storage")) {
            CountDownLatch release = new CountDownLatch(1);
            Mono<String> blocking = Mono.fromCallable(() -> {
                release.await();
                return "x";
            }).subscribeOn(storage.scheduler());
            blocking.subscribe();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).untilAsserted(() ->
                    assertThat(storage.queueDepth()).as("the blocking task taken by the worker").isZero());
            blocking.subscribe();
            assertThat(storage.queueDepth()).isEqualTo(1);
            assertThatThrownBy(() -> Mono.fromCallable(() -> "y").subscribeOn(storage.scheduler()).block())
                    .hasCauseInstanceOf(RejectedExecutionException.class);
            assertThat(storage.rejections()).isEqualTo(1);
            release.countDown();
        }
    }
}
