package dev.dht.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

/**
 * Waits for the first {@code ack} successful answers among {@code from} replica calls: pure Reactor, no I/O.
 *
 * <p>Semantics (after Cassandra's {@code blockFor}): the result completes with the first {@code ack}
 * successes in arrival order; it fails with {@link QuorumNotReachedException} as soon as
 * {@code failures > from - ack} (quorum became impossible) or when {@code timeout} passes. The timeout is for
 * replicas behind the network: a write to this node's own store ({@link #awaitAcks(String, List, int, int,
 * Duration)}'s {@code local}) is not a missing replica when merely slow, so when it alone keeps the quorum
 * open at the timeout the result waits for it, and a local write that then lands is acknowledged instead of being
 * answered 504 although it was stored. Its wait is bounded by the storage queue: a saturated store refuses
 * writes up front ({@link RejectedExecutionException}, 503) instead of queueing them without bound.
 *
 * <p>Reads may contact fewer replicas ({@link #firstAcksSpeculating}): only {@code ack} at first, more after a
 * failure or a delay.
 *
 * <p>Replica calls are detached: each is subscribed once on its own and runs to completion (or its own
 * timeout) even after the quorum answered, failed or was cancelled. A write that is no longer needed for the
 * answer therefore still reaches a slow replica, and no pooled connection is closed by a cancel.
 */
public final class QuorumCollector {

    private QuorumCollector() {
    }

    /**
     * @param operation name used in the failure message (e.g. "PUT")
     * @param calls     one cold Mono per replica; each must emit one value or fail
     * @param ack       successes required, 1 &lt;= ack &lt;= calls.size()
     * @param timeout   how long to wait for {@code ack} successes
     * @return the first {@code ack} values, in arrival order
     */
    public static <T> Mono<List<T>> firstAcks(String operation, List<Mono<T>> calls, int ack, Duration timeout) {
        return collect(operation, calls, ack, timeout, true, calls.size(), null, null, -1);
    }

    /**
     * {@link #firstAcks} contacting only as many replicas as it needs, after Cassandra's read path with
     * speculative retry: the first {@code ack} calls start at once, in list order (so the caller puts the
     * cheapest and likeliest first); the next call starts as soon as one fails; and all calls not yet started
     * start once {@code speculativeRetryDelay} passes without a result. While every replica answers in time a
     * read at ack=2, from=3 thus costs two replica calls instead of three. Tolerance is unchanged: the result
     * fails only once {@code from - ack + 1} calls failed, or at the timeout. So is consistency: any {@code ack}
     * replicas overlap the {@code ack'} that acknowledged a write when {@code ack + ack' > from}.
     *
     * @param speculativeRetryDelay how long the first {@code ack} calls may take before the rest start; positive
     *                              (with no delay, or with {@code ack == from}, there is nothing to speculate on:
     *                              use {@link #firstAcks})
     * @param retryAllowed          asked once the delay passed; false skips the speculative retry (a
     *                              {@link RetryBudget}), not the retries after failures
     * @throws IllegalArgumentException if the delay is not positive or {@code ack} is not below {@code from}
     */
    public static <T> Mono<List<T>> firstAcksSpeculating(String operation, List<Mono<T>> calls, int ack, Duration timeout,
                                                         Duration speculativeRetryDelay, BooleanSupplier retryAllowed) {
        if (speculativeRetryDelay.isNegative() || speculativeRetryDelay.isZero() || ack >= calls.size()) {
            throw new IllegalArgumentException("nothing to speculate on: delay " + speculativeRetryDelay + ", ack " + ack
                    + " of " + calls.size() + " (use firstAcks)");
        }
        return collect(operation, calls, ack, timeout, true, ack, speculativeRetryDelay, retryAllowed, -1);
    }

    /**
     * {@link #firstAcks} for writes, whose answers carry nothing the caller needs: completes empty once
     * {@code ack} calls succeeded (so no value is dropped and discarded downstream, as {@code then()} would).
     */
    public static <T> Mono<Void> awaitAcks(String operation, List<Mono<T>> calls, int ack, Duration timeout) {
        return awaitAcks(operation, calls, -1, ack, timeout);
    }

    /**
     * {@link #awaitAcks(String, List, int, Duration)} where {@code calls.get(local)} writes to this node's own
     * store: at the timeout, if it is still running and its success would complete the quorum, the result waits
     * for it (and for any other answer still coming) instead of failing; it fails at once if the local write
     * then fails, or succeeds without making the quorum.
     *
     * @param local index of the call to this node's own store, or -1 if none of them is
     */
    public static <T> Mono<Void> awaitAcks(String operation, List<Mono<T>> calls, int local, int ack,
                                           Duration timeout) {
        if (local < -1 || local >= calls.size()) {
            throw new IllegalArgumentException("local must be -1 or an index of calls, was " + local);
        }
        return collect(operation, calls, ack, timeout, false, calls.size(), null, null, local);
    }

    /**
     * The merge of the replica calls, taking the first {@code ack} successes, written as one {@link Mono#create}
     * instead of {@code Flux.merge(...).handle(...).next().timeout(...)}: its cancel and discard paths walked
     * the whole subscriber context on every request, a cost the single-node PUT and GET paths felt (commit
     * b63d986 holds the measurement).
     * The timeout is one deadline on {@link QuorumDeadlines}' timing wheel (why a wheel: see there), cancelled when
     * the result is decided or the caller cancels, and so is the speculative retry; callbacks may come from any
     * thread (storage threads, event loops, the wheel's). Both are set after the calls started, and not at all when
     * these already decided the result (a read answered from this node's row cache).
     * A result decided between the check and the scheduling disposes the tasks at once ({@code onDispose} of a
     * finished sink), and they do nothing if they run.
     *
     * @param initial      calls started at once; the rest start on a failure or at {@code speculateAt}
     * @param speculateAt  when to start the calls not yet started; null if {@code initial} is all of them
     * @param retryAllowed whether they may start at {@code speculateAt}; null if {@code speculateAt} is
     * @param local        index of the call to this node's own store, which the timeout waits for; -1 if none
     */
    private static <T, R> Mono<R> collect(String operation, List<Mono<T>> calls, int ack, Duration timeout,
                                          boolean emitValues, int initial, Duration speculateAt,
                                          BooleanSupplier retryAllowed, int local) {
        int from = calls.size();
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("ack must be in [1, " + from + "], was " + ack);
        }
        List<Mono<T>> replicaCalls = List.copyOf(calls);
        return Mono.create(sink -> {
            Tally<T, R> tally = new Tally<>(operation, ack, replicaCalls, initial, sink, emitValues, local);
            tally.start(initial);
            if (tally.isDecided()) {
                return; // answered while starting (e.g. a row cache hit on this node): no timer needed
            }
            Disposable timer = QuorumDeadlines.schedule(tally::timeOut, timeout.toNanos());
            if (speculateAt != null) {
                timer = Disposables.composite(timer,
                        QuorumDeadlines.schedule(() -> tally.speculate(retryAllowed), speculateAt.toNanos()));
            }
            sink.onDispose(timer);
        });
    }

    /** Failure of a call that completed without a value; one shared instance (no stack trace built per call). */
    private static final IllegalStateException COMPLETED_EMPTY = new IllegalStateException("replica call completed empty");

    /**
     * Subscriber of one replica call: detached (its own subscription, never cancelled by the quorum), reports
     * its one outcome to the tally.
     */
    private static final class DetachedCall<T> implements CoreSubscriber<T> {
        private final Tally<T, ?> tally;
        private final int index;
        private boolean answered;

        DetachedCall(Tally<T, ?> tally, int index) {
            this.tally = tally;
            this.index = index;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T value) {
            answered = true;
            tally.success(value, index);
        }

        @Override
        public void onError(Throwable error) {
            answered = true;
            tally.failure(error, index);
        }

        @Override
        public void onComplete() {
            if (!answered) {
                answered = true;
                tally.failure(COMPLETED_EMPTY, index);
            }
        }

        @Override
        public Context currentContext() {
            return Context.empty();
        }
    }

    /**
     * Counts outcomes and decides the result once: the ack-th success, the failure that makes quorum
     * impossible, or the timeout, whichever comes first. Starts calls not yet started on a failure or on
     * {@link #speculate}. The sink is signalled, and calls are subscribed, outside the lock.
     */
    private static final class Tally<T, R> {
        private final String operation;
        private final int ack;
        private final int from;
        private final List<Mono<T>> calls;
        private final MonoSink<R> sink;
        private final boolean emitValues;
        private final List<T> successes;
        private int started;
        private int failures;
        private int overloaded;
        private Throwable firstRefusal;
        private boolean decided;
        /** Index of the call to this node's own store, -1 if none. */
        private final int local;
        /** Whether the call to this node's own store has not answered yet. */
        private boolean localPending;
        /** Whether the timeout passed while the local call kept the quorum open: waiting for that call alone. */
        private boolean timedOut;

        Tally(String operation, int ack, List<Mono<T>> calls, int initial, MonoSink<R> sink, boolean emitValues,
              int local) {
            this.operation = operation;
            this.ack = ack;
            this.from = calls.size();
            this.calls = calls;
            this.started = initial;
            this.sink = sink;
            this.emitValues = emitValues;
            this.successes = new ArrayList<>(ack);
            this.local = local;
            this.localPending = local >= 0;
        }

        /** Whether the result is decided (success, failure or timeout). */
        synchronized boolean isDecided() {
            return decided;
        }

        /** Subscribes the first {@code initial} calls (counted as started by the constructor). */
        void start(int initial) {
            for (int i = 0; i < initial; i++) {
                calls.get(i).subscribe(new DetachedCall<>(this, i));
            }
        }

        /**
         * The speculative retry: starts every call not started yet, unless the result is decided or
         * {@code allowed} says no.
         */
        void speculate(BooleanSupplier allowed) {
            int first;
            synchronized (this) {
                if (decided || started == from || !allowed.getAsBoolean()) {
                    return;
                }
                first = started;
                started = from;
            }
            for (int i = first; i < from; i++) {
                calls.get(i).subscribe(new DetachedCall<>(this, i));
            }
        }

        @SuppressWarnings("unchecked") // R is List<T> when emitValues, Void otherwise
        void success(T value, int index) {
            List<T> result = null;
            QuorumNotReachedException failure = null;
            synchronized (this) {
                if (decided) {
                    return;
                }
                successes.add(value);
                if (index == local) {
                    localPending = false;
                }
                if (successes.size() >= ack) {
                    decided = true;
                    result = emitValues ? List.copyOf(successes) : List.of();
                } else if (timedOut && !localPending) {
                    decided = true; // past the timeout the local write landed, and the quorum is still short
                    failure = exception(true);
                } else {
                    return;
                }
            }
            if (failure != null) {
                sink.error(failure);
            } else if (!emitValues) {
                sink.success();
            } else {
                sink.success((R) result);
            }
        }

        /**
         * Counts a failed call; starts the next call not started yet while the quorum is still reachable. Past
         * the timeout, the local call's failure decides the result.
         */
        void failure(Throwable error, int index) {
            QuorumNotReachedException failure;
            Mono<T> next;
            int nextIndex = -1;
            synchronized (this) {
                if (decided) {
                    return;
                }
                failures++;
                if (isOverload(error)) {
                    overloaded++;
                    firstRefusal = firstRefusal == null ? error : firstRefusal;
                }
                if (index == local) {
                    localPending = false;
                }
                if (failures <= from - ack && !(timedOut && !localPending)) {
                    nextIndex = started < from ? started++ : -1;
                    next = nextIndex < 0 ? null : calls.get(nextIndex);
                    failure = null;
                } else {
                    next = null;
                    decided = true;
                    failure = exception(timedOut);
                }
            }
            if (next != null) {
                next.subscribe(new DetachedCall<>(this, nextIndex));
            }
            if (failure != null) {
                sink.error(failure);
            }
        }

        /**
         * The timeout: fails the result, unless the call to this node's own store is still running and its
         * success would complete the quorum; then the result waits for it.
         */
        void timeOut() {
            QuorumNotReachedException failure;
            synchronized (this) {
                if (decided || timedOut) {
                    return;
                }
                if (localPending && successes.size() + 1 >= ack) {
                    timedOut = true;
                    return;
                }
                decided = true;
                failure = exception(true);
            }
            sink.error(failure);
        }

        private QuorumNotReachedException exception(boolean timedOut) {
            return new QuorumNotReachedException(operation, ack, successes.size(), failures, overloaded, from, timedOut,
                    firstRefusal);
        }

        /** A replica whose storage queue was full (its LocalStore call was rejected). */
        private static boolean isOverload(Throwable error) {
            for (Throwable t = error; t != null; t = t.getCause()) {
                if (t instanceof RejectedExecutionException) {
                    return true;
                }
            }
            return false;
        }
    }
}
