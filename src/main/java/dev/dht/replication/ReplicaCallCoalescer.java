package dev.dht.replication;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.peer.InternalProtocol;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coalesces the replica calls of one kind (writes, or reads) to one peer (Cassandra's outbound message coalescing,
 * the group commit of databases): while fewer than {@code maxInFlight} requests of the kind are in flight to the
 * peer a call goes out at once, alone; beyond that it waits, and all calls waiting go out as one batch request when
 * a request returns. A batch holds at most {@link #MAX_BATCH_RECORDS} calls and
 * {@link InternalProtocol#BATCH_MAX_BYTES} of frames; a call framed larger than a sixteenth of that goes alone. At
 * most {@code max(maxInFlight, MIN_WAITING_BATCHES) * MAX_BATCH_RECORDS} calls wait; one beyond fails at once with
 * {@link OverloadedException} ({@link OverloadReason#REPLICA_CALLS_WAITING}), a 503. Why:
 * docs/replication-and-repair.md, "ReplicaCallCoalescer".
 *
 * <p>A failed batch request fails every call in it; one that succeeds gives each call its own result. Thread-safe
 * and non-blocking: calls arrive from any thread; the next batch goes from the thread that saw a request return.
 *
 * @param <T> what one call carries (a key and record for a write, a key for a read)
 * @param <R> one call's result
 */
final class ReplicaCallCoalescer<T, R> {
    /** Calls in one batch request, at most. */
    static final int MAX_BATCH_RECORDS = InternalProtocol.READ_BATCH_MAX_KEYS;
    /** Batches' worth of calls that may always wait, however few requests may be in flight. */
    static final int MIN_WAITING_BATCHES = 4;
    /** A call framed larger than this is never coalesced. */
    static final int MAX_COALESCED_FRAME_BYTES = InternalProtocol.BATCH_MAX_BYTES / 16;

    private final String peer;
    private final int maxInFlight;
    private final int maxWaiting;
    private final ToIntFunction<T> frameBytes;
    private final Function<List<T>, Mono<List<R>>> send;
    private final ArrayDeque<Pending<T, R>> waiting = new ArrayDeque<>();
    private int inFlight;

    /**
     * @param peer        names the peer in errors
     * @param maxInFlight requests in flight before calls wait and coalesce ({@code dht.replica-writes-in-flight},
     *                    {@code dht.replica-reads-in-flight})
     * @param frameBytes  bytes a call takes in a batch body
     * @param send        sends one request carrying the calls (one: a single call; more: a batch); its Mono emits
     *                    one result per call, in their order, once the peer answered, and must terminate (the
     *                    replica client's response timeout ensures it)
     */
    ReplicaCallCoalescer(String peer, int maxInFlight, ToIntFunction<T> frameBytes, Function<List<T>, Mono<List<R>>> send) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1, was " + maxInFlight);
        }
        this.peer = peer;
        this.maxInFlight = maxInFlight;
        this.maxWaiting = Math.max(maxInFlight, MIN_WAITING_BATCHES) * MAX_BATCH_RECORDS;
        this.frameBytes = frameBytes;
        this.send = send;
    }

    /**
     * Sends {@code call} to the peer, alone or in a batch. Emits its result once the request that carried it
     * was answered; fails with the request's error, or with {@link OverloadedException} if too many calls
     * wait. Cold: nothing is queued until subscribed.
     */
    Mono<R> call(T call) {
        return Mono.create(sink -> {
            Pending<T, R> pending = new Pending<>(call, frameBytes.applyAsInt(call), sink);
            List<Pending<T, R>> batch;
            boolean full;
            synchronized (this) {
                full = waiting.size() >= maxWaiting;
                if (!full) {
                    waiting.addLast(pending);
                }
                batch = full ? null : nextBatch();
            }
            if (full) {
                sink.error(new OverloadedException(OverloadReason.REPLICA_CALLS_WAITING,
                        maxWaiting + " calls to " + peer + " are waiting already"));
            } else if (batch != null) {
                send(batch);
            }
        });
    }

    /** Calls waiting for a request slot now. */
    synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Takes the next request's calls if a slot is free: the waiting calls in order, up to the batch limits; a
     * large one only alone. Caller holds the lock.
     */
    private List<Pending<T, R>> nextBatch() {
        if (inFlight >= maxInFlight || waiting.isEmpty()) {
            return null;
        }
        inFlight++;
        Pending<T, R> first = waiting.pollFirst();
        if (first.frameBytes() > MAX_COALESCED_FRAME_BYTES || waiting.isEmpty()) {
            return List.of(first);
        }
        List<Pending<T, R>> batch = new ArrayList<>(Math.min(MAX_BATCH_RECORDS, waiting.size() + 1));
        batch.add(first);
        long bytes = first.frameBytes();
        while (batch.size() < MAX_BATCH_RECORDS && !waiting.isEmpty()) {
            Pending<T, R> next = waiting.peekFirst();
            if (next.frameBytes() > MAX_COALESCED_FRAME_BYTES || bytes + next.frameBytes() > InternalProtocol.BATCH_MAX_BYTES) {
                break;
            }
            batch.add(waiting.pollFirst());
            bytes += next.frameBytes();
        }
        return batch;
    }

    /**
     * Sends one request. A request that fails at once (on subscribe) completes its calls and sends the next
     * batch from inside this call; the depth of that is bounded, as each batch takes at least one of at most
     * {@code maxInFlight * MAX_BATCH_RECORDS} waiting calls.
     */
    private void send(List<Pending<T, R>> batch) {
        List<T> calls = new ArrayList<>(batch.size());
        for (Pending<T, R> pending : batch) {
            calls.add(pending.call());
        }
        Mono<List<R>> request;
        try {
            request = send.apply(calls);
        } catch (RuntimeException e) {
            finish(batch, null, e);
            return;
        }
        // an empty answer fails the calls (0 results) instead of leaving them and the slot waiting forever
        request.defaultIfEmpty(List.of())
                .subscribe(results -> finish(batch, results, null), error -> finish(batch, null, error));
    }

    /** Completes the request's calls with their results or its error, frees its slot and sends what waits. */
    private void finish(List<Pending<T, R>> batch, List<R> results, Throwable error) {
        if (error == null && results.size() != batch.size()) {
            error = new IllegalStateException(peer + " answered " + results.size() + " of " + batch.size() + " calls");
        }
        for (int i = 0; i < batch.size(); i++) {
            if (error == null) {
                batch.get(i).sink().success(results.get(i));
            } else {
                batch.get(i).sink().error(error);
            }
        }
        List<Pending<T, R>> next;
        synchronized (this) {
            inFlight--;
            next = nextBatch();
        }
        if (next != null) {
            send(next);
        }
    }

    /** A call waiting for, or carried by, a request. */
    private record Pending<T, R>(T call, int frameBytes, MonoSink<R> sink) {
    }
}
