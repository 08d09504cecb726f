package dev.dht.replication;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Coalesces the replica writes this coordinator sends to one peer, after Cassandra's outbound message
 * coalescing and the group commit of databases: while fewer than {@code maxInFlight} write requests to the peer
 * are in flight, a write goes out at once, on its own; beyond that it waits, and all writes waiting go out
 * together, as one batch request, as soon as a request returns. Under light load nothing waits; under heavy
 * load one HTTP exchange carries many records, so replication's cost per record falls as the load rises
 * (the cost of an exchange, not of a record, is what limits a cluster on few cores).
 *
 * <p>A batch holds at most {@link #MAX_BATCH_RECORDS} records and {@link InternalProtocol#BATCH_MAX_BYTES} of
 * frames; a record whose frame is larger than a sixteenth of that always goes alone. At most as many writes
 * may wait as the next round of batches carries ({@code maxInFlight * MAX_BATCH_RECORDS}); a write beyond that
 * fails at once with {@link RejectedExecutionException}, which the quorum counts as overload (503), as it does
 * a full connection pool: it would wait for more than one round trip, and a line that long only turns overload
 * into timeouts (504).
 *
 * <p>A batch succeeds or fails as a whole: every write in it gets the request's outcome. Thread-safe and
 * non-blocking: writes arrive from any thread, and the next batch is sent from the thread that saw a request
 * return (an event loop).
 */
final class WriteCoalescer {
    /** Records in one batch request, at most. */
    static final int MAX_BATCH_RECORDS = 128;
    /** A record framed larger than this is never coalesced. */
    static final int MAX_COALESCED_FRAME_BYTES = InternalProtocol.BATCH_MAX_BYTES / 16;

    private final String peer;
    private final int maxInFlight;
    private final int maxWaiting;
    private final Function<List<KeyedRecord>, Mono<?>> send;
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private int inFlight;

    /**
     * @param peer        names the peer in errors
     * @param maxInFlight requests in flight before writes wait and coalesce ({@code dht.replica-writes-in-flight})
     * @param send        sends one request carrying the records (one record: a single write; more: a batch);
     *                    its Mono succeeds (with or without a value) when the peer applied them all, and must
     *                    terminate (the replica client's response timeout ensures it)
     */
    WriteCoalescer(String peer, int maxInFlight, Function<List<KeyedRecord>, Mono<?>> send) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1, was " + maxInFlight);
        }
        this.peer = peer;
        this.maxInFlight = maxInFlight;
        this.maxWaiting = maxInFlight * MAX_BATCH_RECORDS;
        this.send = send;
    }

    /**
     * Writes {@code record} to the peer, alone or in a batch. Emits true once the request that carried it
     * succeeded; fails with its error, or with {@link RejectedExecutionException} if too many writes wait.
     * Cold: nothing is queued until subscribed.
     */
    Mono<Boolean> write(byte[] key, Record record) {
        return Mono.create(sink -> {
            Pending write = new Pending(new KeyedRecord(key, record), sink);
            List<Pending> batch;
            boolean full;
            synchronized (this) {
                full = waiting.size() >= maxWaiting;
                if (!full) {
                    waiting.addLast(write);
                }
                batch = full ? null : nextBatch();
            }
            if (full) {
                sink.error(new RejectedExecutionException(maxWaiting + " writes to " + peer + " are waiting already"));
            } else if (batch != null) {
                send(batch);
            }
        });
    }

    /** Writes waiting for a request slot now. */
    synchronized int waiting() {
        return waiting.size();
    }

    /**
     * Takes the next request's writes if a slot is free: the waiting writes in order, up to the batch limits; a
     * large record only alone. Caller holds the lock.
     */
    private List<Pending> nextBatch() {
        if (inFlight >= maxInFlight || waiting.isEmpty()) {
            return null;
        }
        inFlight++;
        Pending first = waiting.pollFirst();
        if (first.frameBytes() > MAX_COALESCED_FRAME_BYTES || waiting.isEmpty()) {
            return List.of(first);
        }
        List<Pending> batch = new ArrayList<>(Math.min(MAX_BATCH_RECORDS, waiting.size() + 1));
        batch.add(first);
        long bytes = first.frameBytes();
        while (batch.size() < MAX_BATCH_RECORDS && !waiting.isEmpty()) {
            Pending next = waiting.peekFirst();
            if (next.frameBytes() > MAX_COALESCED_FRAME_BYTES || bytes + next.frameBytes() > InternalProtocol.BATCH_MAX_BYTES) {
                break;
            }
            batch.add(waiting.pollFirst());
            bytes += next.frameBytes();
        }
        return batch;
    }

    /**
     * Sends one request. A request that fails at once (on subscribe) completes its writes and sends the next
     * batch from inside this call; the depth of that is bounded, as each batch takes at least one of at most
     * {@code maxInFlight * MAX_BATCH_RECORDS} waiting writes.
     */
    private void send(List<Pending> batch) {
        List<KeyedRecord> records = new ArrayList<>(batch.size());
        for (Pending write : batch) {
            records.add(write.entry());
        }
        Mono<?> request;
        try {
            request = send.apply(records);
        } catch (RuntimeException e) {
            finish(batch, e);
            return;
        }
        request.subscribe(ignored -> { }, error -> finish(batch, error), () -> finish(batch, null));
    }

    /** Completes the request's writes with its outcome, frees its slot and sends what waits. */
    private void finish(List<Pending> batch, Throwable error) {
        for (Pending write : batch) {
            if (error == null) {
                write.sink().success(Boolean.TRUE);
            } else {
                write.sink().error(error);
            }
        }
        List<Pending> next;
        synchronized (this) {
            inFlight--;
            next = nextBatch();
        }
        if (next != null) {
            send(next);
        }
    }

    /** A write waiting for, or carried by, a request. */
    private record Pending(KeyedRecord entry, MonoSink<Boolean> sink) {
        /** Bytes of its frame in a batch body. */
        int frameBytes() {
            return RangeFrameCodec.frameBytes(entry);
        }
    }
}
