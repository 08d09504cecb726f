package dev.dht.membership;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Membership;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stored view is confirmed by the view log or a member at the same epoch or newer, never by silence; a node that is
 * the only member of its view is its log's only voter and confirms its view by itself.
 */
class ViewCheckTest {
    private static final URI SELF = URI.create("http://localhost:18080");
    private static final URI OTHER = URI.create("http://localhost:18081");
    /** The view log without a leader: its linearizable read fails. */
    private static final Supplier<Optional<ClusterView>> NO_LEADER = () -> {
        throw new IllegalStateException("Leader is unknown");
    };
    /** Every other member unreachable: asking one fails. */
    private static final Supplier<PeerClient> UNREACHABLE = () -> {
        throw new IllegalStateException("unreachable");
    };

    @TempDir
    Path dataDir;

    @Test
    void theOnlyMemberConfirmsItsViewWhileItsLogHasNoLeader() {
        Membership membership = membership(List.of(SELF));
        ViewCheck check = new ViewCheck(membership, UNREACHABLE, NO_LEADER);

        assertFalse(membership.isViewConfirmed(), "unconfirmed before the first check");
        assertTrue(check.check().block());
        assertTrue(membership.isViewConfirmed());
    }

    @Test
    void aMemberOfTwoConfirmsNothingWhenNeitherTheLogNorTheOtherMemberAnswers() {
        Membership membership = membership(List.of(SELF, OTHER));
        ViewCheck check = new ViewCheck(membership, UNREACHABLE, NO_LEADER);

        assertFalse(check.check().block());
        assertFalse(membership.isViewConfirmed());
    }

    private Membership membership(List<URI> nodes) {
        ClusterView view = new ClusterView(3, 3,
                nodes.stream().map(node -> new Member(node, MemberState.NORMAL)).toList());
        return new Membership(SELF, view, new ClusterViewFile(dataDir));
    }
}
