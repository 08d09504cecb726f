package dev.dht.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * Sends blocking requests from threads of their own, released together by one latch, so that they really are in
 * flight at once: the common pool has one thread on a 2-core machine and would send them one after another.
 */
public final class ConcurrentRequests {
    private ConcurrentRequests() {
    }

    /** Runs {@code request.apply(i)} for i in [0, count) on {@code count} threads at once; results in index order. */
    public static <T> List<T> releasedTogether(int count, IntFunction<T> request) {
        ExecutorService threads = Executors.newFixedThreadPool(count);
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<T>> results = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                int index = i;
                results.add(CompletableFuture.supplyAsync(() -> {
                    awaitQuietly(go);
                    return request.apply(index);
                }, threads));
            }
            go.countDown();
            return results.stream().map(CompletableFuture::join).toList();
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * The items {@code test} holds for, tested by {@code threads} threads at once (for blocking tests such as one
     * request per item); each thread takes every {@code threads}-th item, so the order of the result is not kept.
     */
    public static <T> List<T> filter(List<T> items, int threads, Predicate<T> test) {
        return releasedTogether(threads, slice -> {
            List<T> matching = new ArrayList<>();
            for (int i = slice; i < items.size(); i += threads) {
                if (test.test(items.get(i))) {
                    matching.add(items.get(i));
                }
            }
            return matching;
        }).stream().flatMap(List::stream).toList();
    }

    /**
     * Runs {@code action} for i in [0, count) on {@code threads} threads of their own and waits for all; an
     * {@link AssertionError} of one is thrown as it is.
     */
    public static void inParallel(int count, int threads, IntConsumer action) {
        ForkJoinPool pool = new ForkJoinPool(threads);
        try {
            pool.submit(() -> IntStream.range(0, count).parallel().forEach(action)).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AssertionError assertion) {
                throw assertion;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            pool.shutdown();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
