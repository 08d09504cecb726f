package dev.dht.admission;

/**
 * A client request {@link AdmissionHandler} handed on, whose answer it times in {@code dht.client.requests}
 * ({@link dev.dht.metrics.ClientRequestMetrics}): its {@code operation} tag and when Netty read its head. Its time
 * is recorded once, when the head of its answer is written. Touched only on its connection's event loop.
 */
class TimedRequest {
    private final long readNanos;
    private String operation;

    /**
     * @param operation its {@code operation} tag, as {@link dev.dht.metrics.ClientRequestMetrics#operationOf}; null
     *                  if it is not timed
     * @param readNanos {@link System#nanoTime()} when its head was read
     */
    TimedRequest(String operation, long readNanos) {
        this.operation = operation;
        this.readNanos = readNanos;
    }

    /** {@link System#nanoTime()} when its head was read. */
    final long readNanos() {
        return readNanos;
    }

    /**
     * Its {@code operation} tag the first time its answer's head is written, then null: an answer is counted once;
     * null too if it is not timed.
     */
    final String answered() {
        String answered = operation;
        operation = null;
        return answered;
    }
}
