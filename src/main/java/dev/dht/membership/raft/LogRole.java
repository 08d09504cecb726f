package dev.dht.membership.raft;

import java.util.Locale;

/** The place of a member in the view log's Raft configuration ({@link ViewLog#role}). */
public enum LogRole {
    /** It leads the log: it appends every step. */
    LEADER,
    /** It votes, and is not the leader. */
    VOTER,
    /** It receives the log without voting: a joiner, or a member beyond {@code dht.raft.voters}. */
    LISTENER;

    /** The lower-case name, as {@code dht status} shows it. */
    public String token() {
        return name().toLowerCase(Locale.ROOT);
    }
}
