package dev.dht.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Which replicas one request contacts, in which order, and how many answers it needs (after Cassandra's
 * {@code ReplicaPlan}): built by {@link #forWrite}, {@link #forRead} or {@link #forReadRepair}, then carried out
 * by {@link QuorumCollector}. Immutable.
 *
 * <ul>
 *   <li>{@link #contacts()}: the replicas, in the order they are asked;</li>
 *   <li>{@link #ack()}: the successes the request needs;</li>
 *   <li>{@link #initial()}: how many of the contacts are asked at once (the rest after a failure or the
 *       speculative retry delay);</li>
 *   <li>{@link #local()}: the place of this node's own store among the contacts, whose write the timeout waits
 *       for (-1 if none is waited for);</li>
 *   <li>{@link #speculativeRetryDelay()}: when the contacts not asked yet are asked too (null: never).</li>
 * </ul>
 */
public final class ReplicaPlan {
    private static final Comparator<Replica> READ_ORDER = Comparator.comparingInt(Replica::readRank);
    private static final Runnable NOTHING = () -> { };

    private final String operation;
    private final List<Replica> contacts;
    private final int ack;
    private final int initial;
    private final int local;
    private final Duration timeout;
    private final Duration speculativeRetryDelay;
    private final BooleanSupplier speculativeRetryAllowed;
    private final Runnable onExtraContact;
    /**
     * For a write during a membership change: {@code groups[g][i]} says whether contact {@code i} belongs to
     * replica set {@code g}, each of which must give {@code ack} successes; null when the contacts are one set.
     */
    private final boolean[][] groups;

    private ReplicaPlan(String operation, List<Replica> contacts, int ack, int initial, int local, Duration timeout,
                        Duration speculativeRetryDelay, BooleanSupplier speculativeRetryAllowed,
                        Runnable onExtraContact) {
        if (ack < 1 || ack > contacts.size()) {
            throw new IllegalArgumentException("ack must be in [1, " + contacts.size() + "], was " + ack);
        }
        this.operation = operation;
        this.contacts = List.copyOf(contacts);
        this.ack = ack;
        this.initial = initial;
        this.local = local;
        this.timeout = timeout;
        this.speculativeRetryDelay = speculativeRetryDelay;
        this.speculativeRetryAllowed = speculativeRetryAllowed;
        this.onExtraContact = onExtraContact;
        this.groups = null;
    }

    private ReplicaPlan(ReplicaPlan plan, boolean[][] groups) {
        this.operation = plan.operation;
        this.contacts = plan.contacts;
        this.ack = plan.ack;
        this.initial = plan.initial;
        this.local = plan.local;
        this.timeout = plan.timeout;
        this.speculativeRetryDelay = plan.speculativeRetryDelay;
        this.speculativeRetryAllowed = plan.speculativeRetryAllowed;
        this.onExtraContact = plan.onExtraContact;
        this.groups = groups;
    }

    /**
     * A write: every replica asked at once, {@code ack} must succeed within {@code timeout}; this node's own
     * replica ({@link Replica#isLocal()}), if it is one, is waited for past the timeout when its success alone
     * would complete the quorum (see {@link QuorumCollector}).
     *
     * @param operation name for the failure message and metrics (e.g. "PUT")
     * @throws IllegalArgumentException if {@code ack} is not in [1, replicas]
     */
    public static ReplicaPlan forWrite(String operation, List<Replica> replicas, int ack, Duration timeout) {
        int local = -1;
        for (int i = 0; i < replicas.size(); i++) {
            local = replicas.get(i).isLocal() ? i : local;
        }
        return new ReplicaPlan(operation, replicas, ack, replicas.size(), local, timeout, null, null, NOTHING);
    }

    /**
     * A write while the key's replica set changes (a node joining or leaving): sent to every replica of either
     * set at once, it succeeds only with {@code ack} successes among {@code oldReplicas} <em>and</em> {@code ack}
     * among {@code newReplicas}, so that a later read sees it whichever set it asks (ScyllaDB's rule for writes
     * during a topology change; counting the new replicas as extra ones, "ack + pending", lost writes at ack=1).
     * A replica in both sets counts in both. It fails as soon as either set can no longer give {@code ack}.
     *
     * @throws IllegalArgumentException if {@code ack} exceeds the size of either set
     */
    public static ReplicaPlan forWrite(String operation, List<Replica> oldReplicas, List<Replica> newReplicas,
                                       int ack, Duration timeout) {
        if (ack > oldReplicas.size() || ack > newReplicas.size()) {
            throw new IllegalArgumentException("ack " + ack + " exceeds a replica set: " + oldReplicas.size()
                    + " old, " + newReplicas.size() + " new");
        }
        List<Replica> union = union(oldReplicas, newReplicas);
        boolean[][] groups = new boolean[2][union.size()];
        for (int i = 0; i < union.size(); i++) {
            groups[0][i] = oldReplicas.contains(union.get(i));
            groups[1][i] = newReplicas.contains(union.get(i));
        }
        return new ReplicaPlan(forWrite(operation, union, ack, timeout), groups);
    }

    /**
     * A read, after Cassandra's read path with speculative retry: the replicas ordered by
     * {@link Replica#readRank()} (this node first, then peers that answer, then slow ones, then failed ones); the
     * first {@code ack} asked at once, the next one after each failure, and all the rest once
     * {@code speculativeRetryDelay} passed, if {@code retryAllowed} says so then. With a zero delay, or when
     * {@code ack} is all of them, all are asked at once.
     *
     * @param onExtraContact run each time a replica beyond the first {@code ack} is asked (a counter)
     * @throws IllegalArgumentException if {@code ack} is not in [1, replicas]
     */
    public static ReplicaPlan forRead(List<Replica> replicas, int ack, Duration timeout,
                                      Duration speculativeRetryDelay, BooleanSupplier retryAllowed,
                                      Runnable onExtraContact) {
        List<Replica> ordered = new ArrayList<>(replicas);
        ordered.sort(READ_ORDER);
        if (speculativeRetryDelay.isZero() || ack >= ordered.size()) {
            return new ReplicaPlan("GET", ordered, ack, ordered.size(), -1, timeout, null, null, NOTHING);
        }
        if (speculativeRetryDelay.isNegative()) {
            throw new IllegalArgumentException("speculative retry delay must not be negative: " + speculativeRetryDelay);
        }
        return new ReplicaPlan("GET", ordered, ack, ack, -1, timeout, speculativeRetryDelay, retryAllowed,
                onExtraContact);
    }

    /**
     * The blocking read repair of {@code stale} replicas: all asked at once, all must succeed within
     * {@code timeout}.
     */
    public static ReplicaPlan forReadRepair(List<Replica> stale, Duration timeout) {
        return new ReplicaPlan("GET read repair", stale, stale.size(), stale.size(), -1, timeout, null, null, NOTHING);
    }

    /** {@code first}, then the replicas of {@code second} not in it, in order; a new mutable list. */
    static List<Replica> union(List<Replica> first, List<Replica> second) {
        List<Replica> union = new ArrayList<>(first);
        for (Replica replica : second) {
            if (!union.contains(replica)) {
                union.add(replica);
            }
        }
        return union;
    }

    /** Name of the operation, for the failure message (e.g. "PUT"). */
    public String operation() {
        return operation;
    }

    /** The replicas in the order they are asked. */
    public List<Replica> contacts() {
        return contacts;
    }

    /** Successes needed. */
    public int ack() {
        return ack;
    }

    /** Contacts asked at once; the rest wait for a failure or the speculative retry delay. */
    public int initial() {
        return initial;
    }

    /** Index of this node's own store among the contacts, which the timeout waits for; -1 if none. */
    public int local() {
        return local;
    }

    /** How long to wait for {@code ack} successes. */
    public Duration timeout() {
        return timeout;
    }

    /** When the contacts not asked yet are asked too; null if never (all are asked at once). */
    public Duration speculativeRetryDelay() {
        return speculativeRetryDelay;
    }

    /** Asked once the speculative retry delay passed: false skips that retry (not the ones after failures). */
    BooleanSupplier speculativeRetryAllowed() {
        return speculativeRetryAllowed;
    }

    /** Replica sets that must each give {@code ack} successes: 1, or 2 during a membership change. */
    public int groups() {
        return groups == null ? 1 : groups.length;
    }

    /** Whether contact {@code index} belongs to replica set {@code group} (every contact, when there is one set). */
    public boolean inGroup(int group, int index) {
        return groups == null || groups[group][index];
    }

    /** Run each time a contact beyond {@link #initial()} is asked. */
    Runnable onExtraContact() {
        return onExtraContact;
    }
}
