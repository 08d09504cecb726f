package dev.dht.storage;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The bounded, named thread pool where all blocking LevelDB work runs (threads {@code storage-N}).
 *
 * <p>A fixed number of threads takes tasks from a bounded queue. When the queue is full a task is rejected at
 * once ({@link RejectedExecutionException}, answered as 503 with Retry-After) instead of queueing without
 * bound: under overload the node sheds load promptly and keeps its memory.
 *
 * <p>Cancelling a task (a client that went away) never interrupts its thread: Reactor cancels the futures of
 * an executor service with {@code cancel(true)}, and an interrupt would close the file channels of the
 * pure-Java LevelDB engine for good ({@code ClosedByInterruptException}). A task already running finishes; a
 * queued one is skipped.
 */
public final class StorageScheduler implements AutoCloseable {
    private final ThreadPoolExecutor executor;
    private final Scheduler scheduler;
    private final LongAdder rejections = new LongAdder();

    /**
     * @param threads       worker threads (at least 1)
     * @param queueCapacity tasks that may wait for a worker (at least 1)
     * @param namePrefix    thread name prefix
     */
    public StorageScheduler(int threads, int queueCapacity, String namePrefix) {
        AtomicInteger counter = new AtomicInteger();
        ThreadFactory factory = runnable -> {
            Thread thread = new Thread(runnable, namePrefix + "-" + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        this.executor = new NonInterruptingPool(threads, queueCapacity, factory, (task, pool) -> {
            rejections.increment();
            throw new RejectedExecutionException("storage queue full (" + queueCapacity + " tasks waiting)");
        });
        this.scheduler = Schedulers.fromExecutorService(executor, namePrefix);
    }

    /** The Reactor view of the pool, for {@code subscribeOn}/{@code publishOn}. */
    public Scheduler scheduler() {
        return scheduler;
    }

    /**
     * Runs {@code task} on a storage thread; never blocks.
     *
     * @throws RejectedExecutionException if the queue is full (counted in {@link #rejections()}) or the pool is shut
     *                                    down
     */
    public void execute(Runnable task) {
        executor.execute(task);
    }

    /** Tasks that may wait for a worker before further ones are refused. */
    public int queueCapacity() {
        return executor.getQueue().size() + executor.getQueue().remainingCapacity();
    }

    /** Whether {@link #shutdown} was called: every further task is refused. */
    public boolean isShutdown() {
        return executor.isShutdown();
    }

    /** Tasks waiting for a worker right now. */
    public int queueDepth() {
        return executor.getQueue().size();
    }

    /** Tasks rejected because the queue was full, since start. */
    public long rejections() {
        return rejections.sum();
    }

    /**
     * Stops taking tasks and waits up to {@code timeoutMs} ms for queued ones to finish. Blocks.
     *
     * @return true if all tasks finished in time
     */
    public boolean shutdown(long timeoutMs) {
        executor.shutdown();
        try {
            return executor.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@link #shutdown(long)} with 10 s. */
    @Override
    public void close() {
        shutdown(10_000);
    }

    /** A fixed pool whose futures ignore {@code mayInterruptIfRunning}. */
    private static final class NonInterruptingPool extends ThreadPoolExecutor {
        NonInterruptingPool(int threads, int queueCapacity, ThreadFactory factory, RejectedExecutionHandler onFull) {
            super(threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queueCapacity), factory, onFull);
        }

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Callable<T> callable) {
            return new NonInterruptingTask<>(callable);
        }

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
            return new NonInterruptingTask<>(Executors.callable(runnable, value));
        }
    }

    /** A future whose cancel never interrupts the thread running it. */
    private static final class NonInterruptingTask<T> extends FutureTask<T> {
        NonInterruptingTask(Callable<T> callable) {
            super(callable);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return super.cancel(false);
        }
    }
}
