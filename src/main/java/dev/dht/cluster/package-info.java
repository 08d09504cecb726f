/**
 * The cluster as this node sees it: its versioned view ({@link dev.dht.cluster.ClusterView}, stored in the data
 * dir), its members ({@link dev.dht.cluster.ClusterTopology}), the placement of keys on replicas by rendezvous
 * hashing ({@link dev.dht.cluster.ShardRouter}) and whether each peer answers.
 */
package dev.dht.cluster;
