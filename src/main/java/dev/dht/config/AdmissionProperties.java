package dev.dht.config;

import dev.dht.backup.format.BackupFileFormat;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Admission control and body-memory settings: what a node accepts before it answers 413 or 503. Bound from the
 * prefix {@code dht} beside {@link DhtProperties}, so their names stay flat ({@code dht.max-in-flight-requests},
 * environment variable {@code DHT_MAX_IN_FLIGHT_REQUESTS}, ...); checked when bound (a wrong one stops start-up
 * with an {@link InvalidSettingException} naming it). What each trades: docs/operations.md, "The settings explained".
 *
 * @param maxValueSize           largest accepted value (bytes, KB, MB); larger bodies get 413. At most 64MB, the
 *                               largest value a backup holds
 * @param maxInFlightBytes       client request-body bytes held at once; a body that would pass it gets 503. At least
 *                               {@code dht.max-value-size}; unset: a quarter of the max heap, at least that
 * @param maxInFlightRequests    client requests served at once; more get 503 at once
 * @param maxEventLoopLag        event loop lag (median of 5 probes) above which client requests get 503, while at
 *                               least {@code dht.lag-shedding-min-in-flight} are in flight
 * @param lagSheddingMinInFlight client requests in flight below which event loop lag and queue delay refuse none; 0:
 *                               no floor
 * @param maxQueueDelay          client requests get 503 while even the fastest of the last 100 ms took longer than
 *                               this from admission to answer (a standing queue), and at least
 *                               {@code dht.lag-shedding-min-in-flight} are in flight

 */
@ConfigurationProperties("dht")
public record AdmissionProperties(
        @DefaultValue("8MB") DataSize maxValueSize,
        DataSize maxInFlightBytes,
        @DefaultValue("1024") int maxInFlightRequests,
        @DefaultValue("100ms") Duration maxEventLoopLag,
        @DefaultValue("32") int lagSheddingMinInFlight,
        @DefaultValue("300ms") Duration maxQueueDelay) {

    /** Validates the settings and fills in the default of {@code maxInFlightBytes}; see the record comment. */
    public AdmissionProperties {
        if (maxValueSize.toBytes() < 0 || maxValueSize.toBytes() > BackupFileFormat.MAX_VALUE_BYTES) {
            throw new InvalidSettingException("dht.max-value-size", "must be between 0 and 64MB (the largest value"
                    + " a backup holds), was " + maxValueSize);
        }
        if (maxInFlightBytes == null) {
            maxInFlightBytes = defaultMaxInFlightBytes(maxValueSize);
        }
        if (maxInFlightBytes.toBytes() < 1 || maxInFlightBytes.toBytes() < maxValueSize.toBytes()) {
            throw new InvalidSettingException("dht.max-in-flight-bytes",
                    "must be positive and at least dht.max-value-size (" + maxValueSize + "), was " + maxInFlightBytes);
        }
        InvalidSettingException.requireAtLeast("dht.max-in-flight-requests", maxInFlightRequests, 1);
        if (maxEventLoopLag.isNegative() || maxEventLoopLag.isZero()) {
            throw new InvalidSettingException("dht.max-event-loop-lag", "must be positive, was " + maxEventLoopLag);
        }
        if (lagSheddingMinInFlight < 0) {
            throw new InvalidSettingException("dht.lag-shedding-min-in-flight",
                    "must be at least 0, was " + lagSheddingMinInFlight);
        }
        if (maxQueueDelay.isNegative() || maxQueueDelay.isZero()) {
            throw new InvalidSettingException("dht.max-queue-delay", "must be positive, was " + maxQueueDelay);
        }
    }

    /**
     * The default of {@code dht.max-in-flight-bytes}: a quarter of the max heap, since the node holds a body up to
     * about three times while it stores it (the network buffers, the value, its encoded record), and the rest of the
     * heap serves everything else; at least {@code maxValueSize}, so that one largest value fits a small heap.
     */
    static DataSize defaultMaxInFlightBytes(DataSize maxValueSize) {
        return DataSize.ofBytes(Math.max(Runtime.getRuntime().maxMemory() / 4, maxValueSize.toBytes()));
    }
}
