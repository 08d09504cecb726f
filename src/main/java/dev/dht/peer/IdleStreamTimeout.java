package dev.dht.peer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * Fails a stream whose source keeps its subscriber waiting: while the subscriber has requested items that have
 * not come, and none came for {@code idle}, the source is cancelled and the stream fails with a
 * {@link TimeoutException}. Time in which the subscriber requests nothing does not count, so backpressure from a
 * consumer that pauses (a range client reading slowly) never fails it; only a source that stops sending while
 * data is wanted does (a peer stalled mid-stream, a network partition that does not close the connection).
 * Reactor's {@code timeout(...)} measures the time between items whatever the demand, which would fail a paused
 * consumer's healthy stream; hence this operator.
 *
 * <p>The check runs every quarter of {@code idle} on {@link Schedulers#parallel()} (so a stall fails within
 * {@code 1.25 * idle}) and is disposed with the stream. Signals to the subscriber are serialized; non-blocking.
 */
public final class IdleStreamTimeout {

    private IdleStreamTimeout() {
    }

    /**
     * {@code stream}, failing once it sent nothing for {@code idle} while items were requested.
     *
     * @param idle   how long a source may keep wanted items back; positive
     * @param source named in the failure message (e.g. the peer)
     * @throws IllegalArgumentException if {@code idle} is not positive
     */
    public static <T> Flux<T> watch(Flux<T> stream, Duration idle, String source) {
        if (idle.isNegative() || idle.isZero()) {
            throw new IllegalArgumentException("idle must be positive, was " + idle);
        }
        Function<? super Publisher<T>, ? extends Publisher<T>> lift =
                Operators.lift((scannable, actual) -> new IdleSubscriber<T>(actual, idle, source));
        return Flux.from(lift.apply(stream));
    }

    /** Tracks unmet demand and the last progress, and fails the stream from its periodic check. */
    private static final class IdleSubscriber<T> implements CoreSubscriber<T>, Subscription {
        private final CoreSubscriber<? super T> actual;
        private final long idleNanos;
        private final String source;
        /** Items requested and not delivered yet (Long.MAX_VALUE: unbounded). */
        private final AtomicLong wanted = new AtomicLong();
        /** When the source last delivered, or when demand last rose from none (System.nanoTime()). */
        private volatile long lastProgress = System.nanoTime();
        private Subscription upstream;
        private Disposable check;
        /** Whether the subscriber got its terminal signal (guarded by this). */
        private boolean done;

        IdleSubscriber(CoreSubscriber<? super T> actual, Duration idle, String source) {
            this.actual = actual;
            this.idleNanos = idle.toNanos();
            this.source = source;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            upstream = subscription;
            long period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), idleNanos / 4);
            check = Schedulers.parallel().schedulePeriodically(this::check, period, period, TimeUnit.NANOSECONDS);
            actual.onSubscribe(this);
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                upstream.request(n); // the source reports the spec violation
                return;
            }
            long before = wanted.getAndUpdate(current -> Operators.addCap(current, n));
            if (before == 0) {
                lastProgress = System.nanoTime(); // the wait for data starts now, not at the last item
            }
            upstream.request(n);
        }

        @Override
        public void onNext(T item) {
            lastProgress = System.nanoTime();
            wanted.getAndUpdate(current -> current == Long.MAX_VALUE || current == 0 ? current : current - 1);
            synchronized (this) {
                if (done) {
                    Operators.onDiscard(item, actual.currentContext());
                    return;
                }
                actual.onNext(item);
            }
        }

        @Override
        public void onError(Throwable error) {
            synchronized (this) {
                if (!finish()) {
                    Operators.onErrorDropped(error, actual.currentContext());
                    return;
                }
                actual.onError(error);
            }
        }

        @Override
        public void onComplete() {
            synchronized (this) {
                if (finish()) {
                    actual.onComplete();
                }
            }
        }

        @Override
        public void cancel() {
            check.dispose();
            upstream.cancel();
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        /**
         * Marks the stream done and stops the idle check, unless it was done already; true if this call did.
         * Call it holding this object's lock, right before the one terminal signal.
         */
        private boolean finish() {
            if (done) {
                return false;
            }
            done = true;
            check.dispose();
            return true;
        }

        private void check() {
            long silent = System.nanoTime() - lastProgress;
            if (wanted.get() == 0 || silent < idleNanos) {
                return;
            }
            synchronized (this) {
                if (!finish()) {
                    return;
                }
                upstream.cancel();
                actual.onError(new TimeoutException(source + " sent nothing for "
                        + TimeUnit.NANOSECONDS.toMillis(silent) + " ms while data was wanted (idle timeout "
                        + TimeUnit.NANOSECONDS.toMillis(idleNanos) + " ms)"));
            }
        }
    }
}
