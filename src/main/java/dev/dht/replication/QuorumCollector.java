package dev.dht.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * Waits for the first {@code ack} successful answers among {@code from} replica calls: pure Reactor, no I/O.
 *
 * <p>Semantics (after Cassandra's {@code blockFor}): the result completes with the first {@code ack}
 * successes in arrival order; it fails with {@link QuorumNotReachedException} as soon as
 * {@code failures > from - ack} (quorum became impossible) or when {@code timeout} passes.
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
        return collect(operation, calls, ack, timeout, true);
    }

    /**
     * {@link #firstAcks} for writes, whose answers carry nothing the caller needs: completes empty once
     * {@code ack} calls succeeded (so no value is dropped and discarded downstream, as {@code then()} would).
     */
    public static <T> Mono<Void> awaitAcks(String operation, List<Mono<T>> calls, int ack, Duration timeout) {
        return collect(operation, calls, ack, timeout, false);
    }

    /**
     * The merge of the replica calls, taking the first {@code ack} successes, written as one {@link Mono#create}
     * instead of {@code Flux.merge(...).handle(...).next().timeout(...)}: its cancel and discard paths walked
     * the whole subscriber context on every request, and replacing it cut the CPU per single-node PUT and GET
     * by about 15 % (wrk, 32 connections, six 15-s runs of each version, medians 74 -> 63 us and 63 -> 52 us).
     * The timeout is one task on {@link Schedulers#parallel()}, disposed when the result is decided or the
     * caller cancels; callbacks may come from any thread (storage threads, event loops).
     */
    private static <T, R> Mono<R> collect(String operation, List<Mono<T>> calls, int ack, Duration timeout,
                                          boolean emitValues) {
        int from = calls.size();
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("ack must be in [1, " + from + "], was " + ack);
        }
        List<Mono<T>> replicaCalls = List.copyOf(calls);
        return Mono.create(sink -> {
            Tally<T, R> tally = new Tally<>(operation, ack, from, sink, emitValues);
            sink.onDispose(Schedulers.parallel().schedule(tally::timeOut, timeout.toNanos(), TimeUnit.NANOSECONDS));
            for (Mono<T> call : replicaCalls) {
                call.subscribe(new DetachedCall<>(tally));
            }
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
        private boolean answered;

        DetachedCall(Tally<T, ?> tally) {
            this.tally = tally;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T value) {
            answered = true;
            tally.success(value);
        }

        @Override
        public void onError(Throwable error) {
            answered = true;
            tally.failure(error);
        }

        @Override
        public void onComplete() {
            if (!answered) {
                answered = true;
                tally.failure(COMPLETED_EMPTY);
            }
        }

        @Override
        public Context currentContext() {
            return Context.empty();
        }
    }

    /**
     * Counts outcomes and decides the result once: the ack-th success, the failure that makes quorum
     * impossible, or the timeout, whichever comes first. The sink is signalled outside the lock.
     */
    private static final class Tally<T, R> {
        private final String operation;
        private final int ack;
        private final int from;
        private final MonoSink<R> sink;
        private final boolean emitValues;
        private final List<T> successes;
        private int failures;
        private int overloaded;
        private boolean decided;

        Tally(String operation, int ack, int from, MonoSink<R> sink, boolean emitValues) {
            this.operation = operation;
            this.ack = ack;
            this.from = from;
            this.sink = sink;
            this.emitValues = emitValues;
            this.successes = new ArrayList<>(ack);
        }

        @SuppressWarnings("unchecked") // R is List<T> when emitValues, Void otherwise
        void success(T value) {
            List<T> result;
            synchronized (this) {
                if (decided) {
                    return;
                }
                successes.add(value);
                if (successes.size() < ack) {
                    return;
                }
                decided = true;
                result = emitValues ? List.copyOf(successes) : null;
            }
            if (result == null) {
                sink.success();
            } else {
                sink.success((R) result);
            }
        }

        void failure(Throwable error) {
            QuorumNotReachedException failure;
            synchronized (this) {
                if (decided) {
                    return;
                }
                failures++;
                if (isOverload(error)) {
                    overloaded++;
                }
                if (failures <= from - ack) {
                    return;
                }
                decided = true;
                failure = exception(false);
            }
            sink.error(failure);
        }

        void timeOut() {
            QuorumNotReachedException failure;
            synchronized (this) {
                if (decided) {
                    return;
                }
                decided = true;
                failure = exception(true);
            }
            sink.error(failure);
        }

        private QuorumNotReachedException exception(boolean timedOut) {
            return new QuorumNotReachedException(operation, ack, successes.size(), failures, overloaded, from, timedOut);
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
