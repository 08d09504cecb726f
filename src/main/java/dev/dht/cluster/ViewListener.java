package dev.dht.cluster;

/**
 * A reaction of this node to a cluster view it adopted ({@link Membership#onChange}): the hint store drops the hints
 * of removed peers, every new member gets its replica, the epoch fence notes the step, a cleanup is scheduled after
 * a change ended, a founding member's first view decides its rebuild.
 *
 * <p>Called by {@link Membership#adopt} once per adopted view, after the view was stored and became the current one,
 * on the adopting thread (the view log's apply thread, or a bounded-elastic one: a view exchange, the view check, a
 * founding member's start; never an event loop) while that thread holds the membership's lock: the listeners of one
 * view run one after another, in the order they were registered, and all of them before the next view is adopted. A
 * listener may block (the hint store does, on LevelDB), but it holds up every later view meanwhile. A
 * {@link RuntimeException} it throws is logged and the next listener runs: the view stays adopted (an
 * {@link Error} goes up to the adopter, and the later listeners do not run).
 */
@FunctionalInterface
public interface ViewListener {
    /** This node adopted {@code placement}'s view, now its current one. */
    void adopted(Placement placement);
}
