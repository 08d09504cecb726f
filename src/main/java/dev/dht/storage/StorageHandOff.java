package dev.dht.storage;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * Hands blocking storage work from Netty event loops to the {@link StorageScheduler}, one hand-off per event-loop
 * turn: the calls an event loop subscribes to while it processes one batch of ready connections go to a storage
 * thread together, as one task, run there one after another in the order they were subscribed (a call waits for
 * those before it in its turn), and complete back on that loop together, as one task. The group commit of
 * databases applied to the thread hop; why: docs/performance.md, "StorageHandOff". A call subscribed on any other
 * thread is handed off alone and completes on the storage thread.
 *
 * <p>Errors: a storage queue that refuses the turn's task fails every call of the turn with
 * {@link RejectedExecutionException} (which {@link LocalStore} turns into a 503); an exception of one call fails
 * that call only. A call cancelled before its storage thread reaches it is skipped (its work does not run); one
 * already running completes, and its result is dropped.
 *
 * <p>Thread use: {@link #call} never blocks and may be used from any thread; the work runs on a storage thread.
 */
public final class StorageHandOff {
    private final StorageScheduler storage;
    /** The calls of the current turn of the event loop this thread runs; null on threads that run no loop. */
    private final FastThreadLocal<Turn> turns = new FastThreadLocal<>();

    /** Hand-offs to {@code storage}'s threads. */
    public StorageHandOff(StorageScheduler storage) {
        this.storage = storage;
    }

    /**
     * A Mono of {@code work}'s result, run on a storage thread when subscribed (empty if it returns null). Subscribed
     * on an event loop, it completes on that loop; otherwise on the storage thread.
     */
    public <T> Mono<T> call(Callable<T> work) {
        return new HandedOff<>(this, work);
    }

    private void subscribed(Call<?> call) {
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        if (loop == null || !loop.inEventLoop()) {
            List<Call<?>> alone = List.of(call);
            submit(alone, () -> runAll(alone, null));
            return;
        }
        Turn turn = turns.get(); // a thread runs one event loop for its whole life
        if (turn == null) {
            turn = new Turn(loop);
            turns.set(turn);
        }
        turn.add(call);
    }

    /** Runs {@code task} on a storage thread, or fails each of {@code calls} if the storage queue refuses it. */
    private void submit(List<Call<?>> calls, Runnable task) {
        try {
            storage.execute(task);
        } catch (RejectedExecutionException rejected) {
            for (Call<?> call : calls) {
                call.onError(rejected);
            }
        }
    }

    /**
     * Runs each call's work (storage thread), then completes the calls on {@code loop}, or here when there is no loop
     * or it no longer takes tasks (shutting down).
     */
    private static void runAll(List<Call<?>> calls, EventExecutor loop) {
        for (Call<?> call : calls) {
            call.run();
        }
        if (loop != null) {
            try {
                loop.execute(() -> completeAll(calls));
                return;
            } catch (RejectedExecutionException shuttingDown) {
                // fall through: complete on this thread
            }
        }
        completeAll(calls);
    }

    private static void completeAll(List<Call<?>> calls) {
        for (Call<?> call : calls) {
            call.complete();
        }
    }

    /** The calls one event loop subscribed to in its current turn; touched only on that loop. */
    private final class Turn implements Runnable {
        private final EventExecutor loop;
        private List<Call<?>> calls = new ArrayList<>();

        Turn(EventExecutor loop) {
            this.loop = loop;
        }

        void add(Call<?> call) {
            calls.add(call);
            if (calls.size() == 1) {
                // runs after the I/O of this turn, on this loop: the end of the turn
                loop.execute(this);
            }
        }

        /** Ends the turn: its calls go to a storage thread as one task. */
        @Override
        public void run() {
            List<Call<?>> sealed = calls;
            calls = new ArrayList<>(Math.max(4, sealed.size()));
            submit(sealed, () -> runAll(sealed, loop));
        }
    }

    /** The Mono of one call; each subscription hands the work off once. */
    private static final class HandedOff<T> extends Mono<T> {
        private final StorageHandOff handOff;
        private final Callable<T> work;

        HandedOff(StorageHandOff handOff, Callable<T> work) {
            this.handOff = handOff;
            this.work = work;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> actual) {
            Call<T> call = new Call<>(actual, work);
            actual.onSubscribe(call);
            handOff.subscribed(call);
        }
    }

    /** One subscription: its work, then its result or error until it is signalled. */
    private static final class Call<T> extends Operators.MonoSubscriber<T, T> {
        private final Callable<T> work;
        private T result;
        private Throwable error;

        Call(CoreSubscriber<? super T> actual, Callable<T> work) {
            super(actual);
            this.work = work;
        }

        /** Runs the work unless cancelled (storage thread). */
        void run() {
            if (isCancelled()) {
                return;
            }
            try {
                result = work.call();
            } catch (Throwable failure) {
                error = failure;
            }
        }

        /** Signals the outcome of {@link #run} (the loop's thread, or the storage thread). */
        void complete() {
            if (isCancelled()) {
                return;
            }
            if (error != null) {
                onError(error);
            } else if (result == null) {
                onComplete();
            } else {
                complete(result);
            }
        }
    }
}
