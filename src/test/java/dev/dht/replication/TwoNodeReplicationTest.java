package dev.dht.replication;

/** The course's sharding and replication scenarios on a 2-node cluster. */
class TwoNodeReplicationTest extends ReplicationScenarios {
    @Override
    int size() {
        return 2;
    }
}
