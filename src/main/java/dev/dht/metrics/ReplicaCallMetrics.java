package dev.dht.metrics;

import dev.dht.cluster.Node;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Times calls from this coordinator to peer replicas as Timer {@code dht.replica.calls} (Prometheus
 * {@code dht_replica_calls_seconds_*}) with tags {@code peer} (host:port), {@code operation} (read, write,
 * range, write-batch, read-batch) and {@code outcome} (ok, error, timeout), and the records per write or read batch as
 * DistributionSummaries {@code dht.replica.write.batch.records} and {@code dht.replica.read.batch.records} (tag
 * {@code peer}). Non-blocking.
 */
public final class ReplicaCallMetrics {
    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    public ReplicaCallMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** {@code call}, timed from subscription to its value or error. */
    public <T> Mono<T> timed(Node peer, String operation, Mono<T> call) {
        return Mono.defer(() -> {
            long started = System.nanoTime();
            return call.doOnSuccess(value -> record(peer, operation, "ok", started))
                    .doOnError(error -> record(peer, operation, outcomeOf(error), started));
        });
    }

    /** {@code stream}, timed from subscription to completion or error (a cancel is not recorded). */
    public <T> Flux<T> timed(Node peer, String operation, Flux<T> stream) {
        return Flux.defer(() -> {
            long started = System.nanoTime();
            return stream.doOnComplete(() -> record(peer, operation, "ok", started))
                    .doOnError(error -> record(peer, operation, outcomeOf(error), started));
        });
    }

    /**
     * DistributionSummary {@code dht.replica.<operation>.batch.records} of {@code peer}: calls per batch request of
     * {@code operation} (write, read) sent to it. Registered when asked, so that the series exists before the
     * first batch.
     */
    public DistributionSummary batchSize(Node peer, String operation) {
        return DistributionSummary.builder("dht.replica." + operation + ".batch.records")
                .description("Records per " + operation + " batch sent to a peer (" + operation
                        + "s coalesced while others were in flight)")
                .tag("peer", peer.name())
                .register(registry);
    }

    private void record(Node peer, String operation, String outcome, long startedNanos) {
        timers.computeIfAbsent(peer.name() + operation + outcome, key -> Timer.builder("dht.replica.calls")
                        .description("Calls from this coordinator to peer replicas")
                        .tag("peer", peer.name())
                        .tag("operation", operation)
                        .tag("outcome", outcome)
                        .publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofNanos(100_000))
                        .maximumExpectedValue(Duration.ofSeconds(10))
                        .register(registry))
                .record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
    }

    /** "timeout" if a connect, response or Reactor timeout is anywhere in the cause chain, else "error". */
    static String outcomeOf(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException || t instanceof io.netty.handler.timeout.TimeoutException
                    || t instanceof io.netty.channel.ConnectTimeoutException) {
                return "timeout";
            }
        }
        return "error";
    }
}
