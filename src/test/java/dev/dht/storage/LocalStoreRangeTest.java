package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.failure.OverloadedException;
import dev.dht.node.HybridLogicalClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A range stream of the local store whose storage queue fills mid-stream ends with {@link OverloadedException}
 * instead of throwing from its request, and leaves no LevelDB cursor open.
 */
class LocalStoreRangeTest {
    @TempDir
    Path dir;
    LevelDbRecordRepository repository;
    StorageScheduler storage;
    LocalStore store;
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger openCursors = new AtomicInteger();

    @BeforeEach
    void open() {
        repository = LevelDbRecordRepository.open(dir, StorageEngine.JAVA, false);
        for (int i = 0; i < 10; i++) {
            repository.upsert(("k" + i).getBytes(StandardCharsets.UTF_8), Record.value(1 + i, new byte[] {(byte) i}));
        }
        storage = new StorageScheduler(1, 1, "test-storage");
        store = new LocalStore(new CursorCounting(repository), storage, new HybridLogicalClock());
    }

    @AfterEach
    void close() throws Exception {
        release.countDown();
        store.close();
    }

    @Test
    void aFullQueueMidStreamFailsTheStreamInsteadOfThrowingFromRequest() throws InterruptedException {
        StepVerifier.create(store.range("k".getBytes(StandardCharsets.UTF_8), null), 1)
                .expectNextCount(1)
                .then(this::fillTheQueue)
                .thenRequest(1)
                .expectError(OverloadedException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(openCursors).as("cursors left open").hasValue(0);
    }

    private void fillTheQueue() {
        Mono<Void> blocking = Mono.<Void>fromRunnable(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).subscribeOn(storage.scheduler());
        blocking.subscribe();
        while (storage.queueDepth() > 0) {
            Thread.onSpinWait();
        }
        blocking.subscribe();
        assertThat(storage.queueDepth()).isEqualTo(1);
    }

    /** The repository, counting the range cursors that are open. */
    private final class CursorCounting extends ForwardingRecordRepository {
        CursorCounting(RecordRepository delegate) {
            super(delegate);
        }

        @Override
        public Cursor range(byte[] start, byte[] end) {
            Cursor cursor = super.range(start, end);
            openCursors.incrementAndGet();
            return new Cursor() {
                private boolean closed;

                @Override
                public boolean hasNext() {
                    return cursor.hasNext();
                }

                @Override
                public KeyedRecord next() {
                    return cursor.next();
                }

                @Override
                public synchronized void close() {
                    if (!closed) {
                        closed = true;
                        openCursors.decrementAndGet();
                    }
                    cursor.close();
                }
            };
        }
    }
}
