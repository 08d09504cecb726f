/**
 * The cluster view kept by a Raft log (Apache Ratis): {@link dev.dht.membership.raft.ViewStateMachine} (the view
 * as a compare-and-set register on the log), {@link dev.dht.membership.raft.ViewLog} (this node's Raft server and
 * client) and {@link dev.dht.membership.raft.RaftPeers} (which members vote, and where their Raft servers listen).
 * Depends on {@code cluster} only.
 */
package dev.dht.membership.raft;
