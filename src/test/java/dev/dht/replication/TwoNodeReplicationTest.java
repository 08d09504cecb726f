package dev.dht.replication;

/**
 * The course's sharding and replication scenarios ({@link ReplicationScenarios}: writes, reads and deletes through
 * any node, {@code replicas} checked with 400 when malformed or out of range, 504 when too few replicas answer) on a
 * 2-node cluster.
 */
class TwoNodeReplicationTest extends ReplicationScenarios {
    @Override
    int size() {
        return 2;
    }
}
