package dev.dht.config;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the calls a node makes to its peers (replica reads and writes, range streams). Bound from the prefix
 * {@code dht} beside {@link DhtProperties}, so their names stay flat ({@code dht.replica-timeout}, environment
 * variable {@code DHT_REPLICA_TIMEOUT}, ...); checked when bound (a wrong one stops start-up with an
 * {@link InvalidSettingException} naming it). What each trades: docs/operations.md, "The settings explained".
 *
 * @param replicaTimeout        connect and answer timeout of replica calls; a coordinator without {@code ack} answers
 *                              by then answers 504
 * @param speculativeRetryDelay a read asks its first {@code ack} replicas, and the other {@code from - ack} after this
 *                              long without their answers; 0: all at once. Below {@code dht.replica-timeout}
 * @param replicaPoolSize       keep-alive connections per peer; as many calls again may wait for one, more get 503
 * @param replicaWritesInFlight write requests in flight per peer (at most the pool size); more wait and go as one
 *                              batch
 * @param replicaReadsInFlight  read requests in flight per peer (at most the pool size); more wait and go as one
 *                              batch
 * @param rangeIdleTimeout      how long a peer's range stream may send nothing while its data is wanted before the
 *                              range is cut off

 */
@ConfigurationProperties("dht")
public record ReplicaClientProperties(
        @DefaultValue("1s") Duration replicaTimeout,
        @DefaultValue("50ms") Duration speculativeRetryDelay,
        @DefaultValue("64") int replicaPoolSize,
        @DefaultValue("1") int replicaWritesInFlight,
        @DefaultValue("1") int replicaReadsInFlight,
        @DefaultValue("10s") Duration rangeIdleTimeout) {

    /** Validates the settings; see the record comment. */
    public ReplicaClientProperties {
        if (replicaTimeout.isNegative() || replicaTimeout.isZero()) {
            throw new InvalidSettingException("dht.replica-timeout", "must be positive, was " + replicaTimeout);
        }
        if (speculativeRetryDelay.isNegative() || speculativeRetryDelay.compareTo(replicaTimeout) >= 0) {
            throw new InvalidSettingException("dht.speculative-retry-delay",
                    "must be at least 0 and below dht.replica-timeout (" + replicaTimeout + "), was " + speculativeRetryDelay);
        }
        InvalidSettingException.requireAtLeast("dht.replica-pool-size", replicaPoolSize, 1);
        InvalidSettingException.requireAtLeast("dht.replica-writes-in-flight", replicaWritesInFlight, 1);
        InvalidSettingException.requireAtLeast("dht.replica-reads-in-flight", replicaReadsInFlight, 1);
        if (rangeIdleTimeout.isNegative() || rangeIdleTimeout.isZero()) {
            throw new InvalidSettingException("dht.range-idle-timeout", "must be positive, was " + rangeIdleTimeout);
        }
    }

    /** Write requests in flight per peer, at most the pool size. */
    public int effectiveWritesInFlight() {
        return Math.min(replicaWritesInFlight, replicaPoolSize);
    }

    /** Read requests in flight per peer, at most the pool size. */
    public int effectiveReadsInFlight() {
        return Math.min(replicaReadsInFlight, replicaPoolSize);
    }
}
