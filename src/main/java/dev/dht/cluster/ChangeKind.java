package dev.dht.cluster;

import java.util.Locale;

/** What a membership change does: a node joins, a live node leaves, or a dead node is removed. */
public enum ChangeKind {
    /** A new node joins: it is {@link MemberState#JOINING} until the change completes, then {@code NORMAL}. */
    JOIN,
    /** A live member leaves: {@link MemberState#LEAVING}, it streams its records to the nodes that gain them. */
    DECOMMISSION,
    /**
     * A dead member is removed: {@link MemberState#LEAVING}, the others re-replicate from the surviving copies (what
     * only it held is lost).
     */
    REMOVENODE;

    /** The kind as JSON and the view file write it: {@code join}, {@code decommission}, {@code removenode}. */
    public String token() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The kind whose {@link #token()} is {@code token}.
     *
     * @throws IllegalArgumentException for any other text
     */
    public static ChangeKind fromToken(String token) {
        for (ChangeKind kind : values()) {
            if (kind.token().equals(token)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown change kind '" + token + "'");
    }
}
