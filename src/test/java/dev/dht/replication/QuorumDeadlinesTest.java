package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** The timing wheel of quorum deadlines: a deadline fires once, never early, on the wheel's thread; a cancelled one never. */
class QuorumDeadlinesTest {

    @Test
    void aDeadlineFiresOnceItsDelayHasPassedNeverEarlier() throws InterruptedException {
        CountDownLatch fired = new CountDownLatch(1);
        AtomicLong firedAt = new AtomicLong();
        AtomicReference<String> thread = new AtomicReference<>();
        long setAt = System.nanoTime();
        Disposable deadline = QuorumDeadlines.schedule(() -> {
            firedAt.set(System.nanoTime());
            thread.set(Thread.currentThread().getName());
            fired.countDown();
        }, TimeUnit.MILLISECONDS.toNanos(40));

        assertThat(fired.await(5, TimeUnit.SECONDS)).as("fired").isTrue();
        assertThat(firedAt.get() - setAt).as("ns after it was set").isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
        assertThat(thread.get()).isEqualTo("quorum-deadlines");
        assertThat(deadline.isDisposed()).as("done once it ran").isTrue();
    }

    @Test
    void aCancelledDeadlineNeverFires() throws InterruptedException {
        CountDownLatch cancelledFired = new CountDownLatch(1);
        Disposable cancelled = QuorumDeadlines.schedule(cancelledFired::countDown, TimeUnit.MILLISECONDS.toNanos(20));
        cancelled.dispose();
        assertThat(cancelled.isDisposed()).isTrue();

        CountDownLatch later = new CountDownLatch(1);
        QuorumDeadlines.schedule(later::countDown, TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(later.await(5, TimeUnit.SECONDS)).as("a later deadline fired").isTrue();
        assertThat(cancelledFired.getCount()).as("the cancelled one, due 80 ms before it, did not").isEqualTo(1);
    }
}
