package dev.dht.cluster;

/** Where a member stands in the cluster's membership (after Cassandra's and ScyllaDB's node states). */
public enum MemberState {
    /** Owns the keys placement gives it; serves reads and writes. */
    NORMAL,
    /** Being added: gains keys, which are streamed to it; not yet read from. */
    JOINING,
    /** Being removed: its keys are streamed to the members that gain them; still read from until they have them. */
    LEAVING
}
