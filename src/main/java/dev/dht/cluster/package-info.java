/**
 * The cluster as this node sees it: its versioned view ({@link dev.dht.cluster.ClusterView}, stored in the data
 * dir, with the membership change in progress), the view it acts on now ({@link dev.dht.cluster.Membership}), the
 * placement of keys on replicas by rendezvous hashing, old and new sets during a change
 * ({@link dev.dht.cluster.Placement}, {@link dev.dht.cluster.ShardRouter}) and whether each peer answers.
 */
package dev.dht.cluster;
