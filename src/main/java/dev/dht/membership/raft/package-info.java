/**
 * The cluster view kept by a Raft log (Apache Ratis): {@link dev.dht.membership.raft.ViewStateMachine} (the view
 * as a compare-and-set register on the log), {@link dev.dht.membership.raft.ViewLog} (this node's Raft server and
 * client) and {@link dev.dht.membership.raft.RaftPeers} (which members vote, and where their Raft servers listen).
 * Depends on {@code cluster} only. The only package that uses Ratis: what the rest of the code asks of the log, it
 * asks in the terms of the cluster (views, members' URLs, {@link dev.dht.membership.raft.LogRole}).
 */
package dev.dht.membership.raft;
