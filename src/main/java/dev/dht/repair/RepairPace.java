package dev.dht.repair;

import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * Paces one stream of a repair to at most {@code rate} items per second, in batches: {@link #pause} gives the
 * delay before the next batch may go on. The delay is a {@link Mono#delay} timer on Reactor's parallel
 * scheduler, so no thread waits (neither a storage thread nor an event loop). A stream that fell behind (the
 * store or peer was slower than the rate) does not catch up in a burst: the schedule restarts from now.
 * Not thread-safe: one stream, whose batches are handled one at a time.
 */
final class RepairPace {
    private final long nanosPerItem;
    private long nextBatchAt = System.nanoTime();

    /**
     * @param rate items per second, at most
     * @throws IllegalArgumentException if {@code rate} is below 1
     */
    RepairPace(int rate) {
        if (rate < 1) {
            throw new IllegalArgumentException("rate must be at least 1 per second, was " + rate);
        }
        this.nanosPerItem = 1_000_000_000L / rate;
    }

    /** Books {@code items} and completes once they may pass at the rate (at once if the stream is behind). */
    Mono<Void> pause(int items) {
        long now = System.nanoTime();
        nextBatchAt = Math.max(nextBatchAt, now) + items * nanosPerItem;
        long wait = nextBatchAt - now;
        return wait <= 0 ? Mono.empty() : Mono.delay(Duration.ofNanos(wait)).then();
    }
}
