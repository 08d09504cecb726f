package dev.dht.replication;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * Where a quorum's timers run (its timeout and its speculative retry): on the calling thread's event loop when
 * that is one of the given loops, else on Reactor's {@link Schedulers#parallel()}.
 *
 * <p>Why: nearly every quorum is decided long before its timer is due, so the timer is scheduled and cancelled
 * once per request. On the parallel scheduler that usually wakes a parallel thread (a timer that becomes the
 * head of an empty queue signals its worker): a single node at 4200 PUT/s switched to those threads about 2800
 * times a second (gatling/README.md). On its own event loop a timer is an entry in the loop's timer queue, which
 * the loop reads whenever it wakes anyway; cancelled from another thread (a storage thread that completed the
 * quorum) it is removed lazily, at the loop's next wake-up, without waking it.
 *
 * <p>Non-blocking and thread-safe. A task on an event loop runs late while that loop is busy, as the loop's own
 * I/O does.
 */
public final class QuorumTimers {
    /** Timers on the parallel scheduler only (no event loops known). */
    public static final QuorumTimers PARALLEL = new QuorumTimers(List.of());

    private final EventExecutor[] loops;

    private QuorumTimers(List<EventExecutor> loops) {
        this.loops = loops.toArray(new EventExecutor[0]);
    }

    /** Timers on the calling thread's loop when it is one of {@code group}'s (the web server's event loops). */
    public static QuorumTimers onLoopsOf(EventLoopGroup group) {
        List<EventExecutor> loops = new ArrayList<>();
        group.forEach(loops::add);
        return new QuorumTimers(loops);
    }

    /**
     * Runs {@code task} after {@code delay}, unless the returned Disposable is disposed first (from any thread).
     */
    public Disposable schedule(Runnable task, Duration delay) {
        for (EventExecutor loop : loops) {
            if (loop.inEventLoop()) {
                ScheduledFuture<?> scheduled = loop.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
                return () -> scheduled.cancel(false);
            }
        }
        return Schedulers.parallel().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
}
