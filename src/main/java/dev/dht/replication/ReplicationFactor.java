package dev.dht.replication;

/**
 * How many replicas a request goes to ({@code from}) and how many must succeed before the coordinator
 * answers ({@code ack}): the {@code replicas=ack/from} parameter of the v0 API.
 *
 * @param ack  successes required, 1 &lt;= ack &lt;= from
 * @param from replicas asked, from &lt;= cluster size
 */
public record ReplicationFactor(int ack, int from) {

    /** @throws IllegalArgumentException unless {@code 1 <= ack <= from} */
    public ReplicationFactor {
        if (ack < 1) {
            throw new IllegalArgumentException("ack must be at least 1, was " + ack);
        }
        if (ack > from) {
            throw new IllegalArgumentException("ack " + ack + " exceeds from " + from);
        }
    }

    /** A majority of {@code n} replicas, {@code (n/2+1)/n}. */
    public static ReplicationFactor quorumOf(int n) {
        return new ReplicationFactor(n / 2 + 1, n);
    }

    /**
     * The default of a request without {@code replicas}: a majority of {@code replicationFactor} replicas
     * ({@code dht.replication-factor}), or of all {@code clusterSize} nodes while there are fewer, so adding nodes
     * beyond the factor adds capacity, not copies.
     */
    public static ReplicationFactor defaultFor(int replicationFactor, int clusterSize) {
        return quorumOf(Math.min(replicationFactor, clusterSize));
    }

    /**
     * Checks {@code from} against the cluster size.
     *
     * @throws ClusterTooSmallException if {@code from} exceeds {@code clusterSize} (400)
     */
    public ReplicationFactor within(int clusterSize) {
        if (from > clusterSize) {
            throw new ClusterTooSmallException(from, clusterSize);
        }
        return this;
    }

    @Override
    public String toString() {
        return ack + "/" + from;
    }
}
