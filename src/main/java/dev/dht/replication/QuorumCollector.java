package dev.dht.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

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
        int from = calls.size();
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("ack must be in [1, " + from + "], was " + ack);
        }
        return Mono.defer(() -> {
            Tally<T> tally = new Tally<>(operation, ack, from);
            List<Mono<Outcome<T>>> detached = new ArrayList<>(from);
            for (Mono<T> call : calls) {
                detached.add(detach(call));
            }
            return Flux.merge(detached)
                    .<List<T>>handle((outcome, sink) -> {
                        tally.add(outcome);
                        if (tally.reached()) {
                            sink.next(tally.successes());
                            sink.complete();
                        } else if (tally.impossible()) {
                            sink.error(tally.failure(false));
                        }
                    })
                    .next()
                    .timeout(timeout, Mono.defer(() -> Mono.error(tally.failure(true))));
        });
    }

    /**
     * Failure of a call that completed without a value. One shared instance: the completion callback also runs
     * after every value (and is then ignored), so it must not build an exception each time.
     */
    private static final Outcome<Object> COMPLETED_EMPTY =
            new Outcome<>(null, new IllegalStateException("replica call completed empty"));

    @SuppressWarnings("unchecked") // COMPLETED_EMPTY carries no value, so it is an Outcome of any T
    private static <T> Mono<Outcome<T>> detach(Mono<T> call) {
        Sinks.One<Outcome<T>> sink = Sinks.one();
        call.subscribe(
                value -> sink.tryEmitValue(new Outcome<>(value, null)),
                error -> sink.tryEmitValue(new Outcome<>(null, error)),
                () -> sink.tryEmitValue((Outcome<T>) COMPLETED_EMPTY));
        return sink.asMono();
    }

    private record Outcome<T>(T value, Throwable error) {
    }

    /** Counts outcomes; only touched from the serialised merge, read by the timeout fallback afterwards. */
    private static final class Tally<T> {
        private final String operation;
        private final int ack;
        private final int from;
        private final List<T> successes;
        private int failures;
        private int overloaded;

        Tally(String operation, int ack, int from) {
            this.operation = operation;
            this.ack = ack;
            this.from = from;
            this.successes = new ArrayList<>(ack);
        }

        synchronized void add(Outcome<T> outcome) {
            if (outcome.error() == null) {
                successes.add(outcome.value());
            } else {
                failures++;
                if (isOverload(outcome.error())) {
                    overloaded++;
                }
            }
        }

        synchronized boolean reached() {
            return successes.size() >= ack;
        }

        synchronized boolean impossible() {
            return failures > from - ack;
        }

        synchronized List<T> successes() {
            return List.copyOf(successes.subList(0, ack));
        }

        synchronized QuorumNotReachedException failure(boolean timedOut) {
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
