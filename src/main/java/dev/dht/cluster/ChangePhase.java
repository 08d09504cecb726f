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
    /** Writes still go to both sets; reads use the new set. Past this point the change cannot be aborted. */
    WRITE_BOTH_READ_NEW;

    /** The phase as JSON and logs write it, e.g. {@code write-both-read-old}. */
    public String token() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The phase after this one, or null after the last. */
    public ChangePhase next() {
        return ordinal() + 1 < values().length ? values()[ordinal() + 1] : null;
    }
}
