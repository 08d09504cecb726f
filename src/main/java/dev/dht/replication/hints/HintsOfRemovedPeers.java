package dev.dht.replication.hints;

import dev.dht.cluster.Placement;
import dev.dht.cluster.ViewListener;

/**
 * Drops the hints kept for peers that are no members any more whenever this node, a member of the view it adopted,
 * takes a new view ({@link HintedHandoff#dropHintsOfRemovedPeers}); a view without this node (it left) drops nothing.
 * Blocks on the hint store, on the adopting thread ({@link ViewListener}).
 */
public final class HintsOfRemovedPeers implements ViewListener {
    private final HintedHandoff handoff;

    /** @param handoff the hinted handoff whose store is cleaned */
    public HintsOfRemovedPeers(HintedHandoff handoff) {
        this.handoff = handoff;
    }

    @Override
    public void adopted(Placement placement) {
        if (placement.self() != null) {
            handoff.dropHintsOfRemovedPeers(placement.members());
        }
    }
}
