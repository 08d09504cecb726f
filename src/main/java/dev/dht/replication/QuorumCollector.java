package dev.dht.replication;

import dev.dht.failure.OverloadedException;
import dev.dht.replication.QuorumNotReachedException.Outcome;
import dev.dht.replication.QuorumNotReachedException.ReplicaOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

/**
 * Carries out a {@link ReplicaPlan}: asks its contacts and waits for the first {@code ack} successes (after
 * Cassandra's {@code blockFor}). Pure Reactor, no I/O of its own. The result completes with the first {@code ack}
 * successes in arrival order; it fails with {@link QuorumNotReachedException} as soon as
 * {@code failures > from - ack} (quorum became impossible) or when the plan's timeout passes, except that a slow
 * write to this node's own store ({@link ReplicaPlan#local()}) that alone keeps the quorum open is waited for (a
 * saturated store refuses up front instead, {@link OverloadedException}, 503).
 *
 * <p>Only the plan's first {@link ReplicaPlan#initial()} contacts are asked at once; the next one after each
 * failure, and all the rest once the speculative retry delay passes (if the plan has one and allows it then).
 *
 * <p>Replica calls are detached: each is subscribed once on its own and runs to completion (or its own timeout)
 * even after the quorum answered, failed or was cancelled. Callbacks may come from any thread (storage threads,
 * event loops, the timer's); never blocks. Why: docs/replication-and-repair.md, "QuorumCollector".
 */
public final class QuorumCollector {

    private QuorumCollector() {
    }

    /**
     * The first {@code ack} answers of {@code call} applied to the plan's contacts, in arrival order.
     *
     * @param call one cold Mono per replica, subscribed when the plan asks that replica; it must emit one value or
     *             fail
     */
    public static <T> Mono<List<T>> firstAcks(ReplicaPlan plan, Function<Replica, Mono<T>> call) {
        return collect(plan, call, true);
    }

    /**
     * {@link #firstAcks} for writes, whose answers carry nothing the caller needs: completes empty once
     * {@code ack} calls succeeded (so no value is dropped and discarded downstream, as {@code then()} would).
     */
    public static <T> Mono<Void> awaitAcks(ReplicaPlan plan, Function<Replica, Mono<T>> call) {
        return collect(plan, call, false);
    }

    /**
     * The merge of the replica calls, taking the first {@code ack} successes, written as one {@link Mono#create}
     * instead of {@code Flux.merge(...).handle(...).next().timeout(...)}, whose cancel and discard paths walked
     * the whole subscriber context on every request. The timeout is one deadline on {@link QuorumDeadlines}'
     * timing wheel, cancelled when the result is decided or the caller cancels, and so is the speculative retry.
     * Both are set after the calls started, and not at all when these already decided the result (a read answered
     * from this node's row cache). A result decided between the check and the scheduling disposes the tasks at
     * once ({@code onDispose} of a finished sink), and they do nothing if they run.
     */
    private static <T, R> Mono<R> collect(ReplicaPlan plan, Function<Replica, Mono<T>> call, boolean emitValues) {
        List<Mono<T>> calls = new ArrayList<>(plan.contacts().size());
        for (Replica replica : plan.contacts()) {
            calls.add(call.apply(replica));
        }
        return Mono.create(sink -> {
            Tally<T, R> tally = new Tally<>(plan, calls, sink, emitValues);
            tally.start();
            if (tally.isDecided()) {
                return; // answered while starting (e.g. a row cache hit on this node): no timer needed
            }
            Disposable timer = QuorumDeadlines.schedule(tally::timeOut, plan.timeout().toNanos());
            if (plan.speculativeRetryDelay() != null) {
                timer = Disposables.composite(timer,
                        QuorumDeadlines.schedule(tally::speculate, plan.speculativeRetryDelay().toNanos()));
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
        private final ReplicaPlan plan;
        private final int ack;
        private final int from;
        private final List<Mono<T>> calls;
        private final MonoSink<R> sink;
        private final boolean emitValues;
        private final List<T> successes;
        /** Each call's outcome once it has one; null while it runs or is not started. */
        private final Outcome[] outcomes;
        private final Throwable[] failuresByCall;
        private int started;
        private int failures;
        private boolean decided;
        /** Index of the call to this node's own store, -1 if none. */
        private final int local;
        /** Whether the call to this node's own store has not answered yet. */
        private boolean localPending;
        /** Whether the timeout passed while the local call kept the quorum open: waiting for that call alone. */
        private boolean timedOut;
        /** Per replica set of a plan with two sets (a membership change): successes and failures; else null. */
        private final int[] groupSuccesses;
        private final int[] groupFailures;
        private final int[] groupSizes;

        Tally(ReplicaPlan plan, List<Mono<T>> calls, MonoSink<R> sink, boolean emitValues) {
            this.plan = plan;
            this.ack = plan.ack();
            this.from = calls.size();
            this.calls = calls;
            this.started = plan.initial();
            this.sink = sink;
            this.emitValues = emitValues;
            this.successes = new ArrayList<>(ack);
            this.outcomes = new Outcome[from];
            this.failuresByCall = new Throwable[from];
            this.local = plan.local();
            this.localPending = local >= 0;
            if (plan.groups() > 1) {
                groupSuccesses = new int[plan.groups()];
                groupFailures = new int[plan.groups()];
                groupSizes = new int[plan.groups()];
                for (int g = 0; g < plan.groups(); g++) {
                    for (int i = 0; i < from; i++) {
                        groupSizes[g] += plan.inGroup(g, i) ? 1 : 0;
                    }
                }
            } else {
                groupSuccesses = null;
                groupFailures = null;
                groupSizes = null;
            }
        }

        /** Whether the successes so far make the quorum (in every replica set); under the lock. */
        private boolean reached() {
            if (groupSuccesses == null) {
                return successes.size() >= ack;
            }
            for (int count : groupSuccesses) {
                if (count < ack) {
                    return false;
                }
            }
            return true;
        }

        /** Whether the failures so far leave the quorum out of reach (in some replica set); under the lock. */
        private boolean outOfReach() {
            if (groupFailures == null) {
                return failures > from - ack;
            }
            for (int g = 0; g < groupFailures.length; g++) {
                if (groupFailures[g] > groupSizes[g] - ack) {
                    return true;
                }
            }
            return false;
        }

        /** Whether the local call's success alone would make the quorum; under the lock. */
        private boolean localWouldComplete() {
            if (groupSuccesses == null) {
                return successes.size() + 1 >= ack;
            }
            for (int g = 0; g < groupSuccesses.length; g++) {
                if (groupSuccesses[g] + (plan.inGroup(g, local) ? 1 : 0) < ack) {
                    return false;
                }
            }
            return true;
        }

        /** Counts call {@code index}'s outcome in the replica sets it belongs to; under the lock. */
        private void countInGroups(int[] counts, int index) {
            if (counts != null) {
                for (int g = 0; g < counts.length; g++) {
                    counts[g] += plan.inGroup(g, index) ? 1 : 0;
                }
            }
        }

        /** Whether the result is decided (success, failure or timeout). */
        synchronized boolean isDecided() {
            return decided;
        }

        /** Subscribes the plan's initial calls (counted as started by the constructor). */
        void start() {
            for (int i = 0; i < plan.initial(); i++) {
                calls.get(i).subscribe(new DetachedCall<>(this, i));
            }
        }

        /** Subscribes call {@code index}, one beyond the plan's initial calls. */
        private void startExtra(int index) {
            plan.onExtraContact().run();
            calls.get(index).subscribe(new DetachedCall<>(this, index));
        }

        /**
         * The speculative retry: starts every call not started yet, unless the result is decided or the plan's
         * retry budget says no.
         */
        void speculate() {
            int first;
            synchronized (this) {
                if (decided || started == from || !plan.speculativeRetryAllowed().getAsBoolean()) {
                    return;
                }
                first = started;
                started = from;
            }
            for (int i = first; i < from; i++) {
                startExtra(i);
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
                countInGroups(groupSuccesses, index);
                outcomes[index] = Outcome.ANSWERED;
                if (index == local) {
                    localPending = false;
                }
                if (reached()) {
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
                countInGroups(groupFailures, index);
                outcomes[index] = error instanceof OverloadedException ? Outcome.REFUSED : Outcome.FAILED;
                failuresByCall[index] = error;
                if (index == local) {
                    localPending = false;
                }
                if (!outOfReach() && !(timedOut && !localPending)) {
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
                startExtra(nextIndex);
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
                if (localPending && localWouldComplete()) {
                    timedOut = true;
                    return;
                }
                decided = true;
                failure = exception(true);
            }
            sink.error(failure);
        }

        /** The failure as it stands; under the lock. */
        private QuorumNotReachedException exception(boolean timedOut) {
            List<ReplicaOutcome> parts = new ArrayList<>(from);
            for (int i = 0; i < from; i++) {
                Outcome outcome = outcomes[i];
                if (outcome == null) {
                    outcome = timedOut && i < started ? Outcome.TIMED_OUT : Outcome.NOT_NEEDED;
                }
                parts.add(new ReplicaOutcome(outcome, failuresByCall[i], plan.contacts().get(i).isLocal()));
            }
            return new QuorumNotReachedException(plan.operation(), ack, parts);
        }
    }
}
