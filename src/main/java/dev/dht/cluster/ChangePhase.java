package dev.dht.cluster;

import java.util.Locale;

/**
 * The phases of a membership change, in order (after ScyllaDB's topology transitions). Each is entered in a view
 * of its own epoch, and only after every member stored that view and finished the requests it coordinated under
 * the one before, so two members are never more than one phase apart and neighbouring phases are compatible.
 */
public enum ChangePhase {
    /** Writes go to the old and the new replica set and need {@code ack} in each; reads use the old set. */
    WRITE_BOTH_READ_OLD,
    /** As before; the nodes that gain keys pull them from every live old replica. */
    STREAMING,
    /** Writes still go to both sets; reads use the new set. */
    WRITE_BOTH_READ_NEW,
    /**
     * The change is being undone from {@link #WRITE_BOTH_READ_NEW}: writes still go to both sets, reads use the old
     * set again; the next view is the membership before the change. The step between the two keeps neighbouring
     * views compatible: a member still reading the new set and one already writing only the old set never meet.
     */
    ROLLBACK;

    /** The phase as JSON and logs write it, e.g. {@code write-both-read-old}. */
    public String token() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The phase after this one on the way forward, or null after the last (and for {@link #ROLLBACK}). */
    public ChangePhase next() {
        return switch (this) {
            case WRITE_BOTH_READ_OLD -> STREAMING;
            case STREAMING -> WRITE_BOTH_READ_NEW;
            case WRITE_BOTH_READ_NEW, ROLLBACK -> null;
        };
    }
}
