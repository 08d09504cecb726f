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
 * @param replicaTimeout        connect and answer timeout of replica calls; no quorum by then is 504. Default 1s
 * @param speculativeRetryDelay read wait for {@code ack} answers before asking all; below replicaTimeout. Default 50ms
 * @param replicaPoolSize       pooled connections per peer. Default 64
 * @param replicaWritesInFlight write requests in flight per peer (<= pool size); more wait and batch. Default 1
 * @param replicaReadsInFlight  read requests in flight per peer (<= pool size); more wait and batch. Default 1
 * @param rangeIdleTimeout      how long a peer's range stream may send nothing while data is wanted. Default 10s
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
