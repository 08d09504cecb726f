package dev.dht.membership.raft;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Who takes part in the view log, and where: each member's Raft server listens at the member's host on its URL's
 * port plus {@code portOffset} ({@code dht.raft.port} minus {@code server.port}, the same on every node: 1000 by
 * default, so 9080 beside 8080); its peer id is {@code host_port} of its URL.
 *
 * <p>Voters: the {@code NORMAL} members in view order, then the {@code LEAVING} one (a decommissioned or removed
 * member keeps its vote until the change that removes it ends: the view without it), the first {@code maxVoters} of
 * them, cut to an odd count (an even one tolerates no more failures than the odd one below it and needs a larger
 * majority). A joiner votes once it is {@code NORMAL}, at the end of its join; until then it is a listener that
 * receives the log without voting, as is every member beyond the count. So a view of three or more members that
 * are not joining has at least three voters, and the death of any one member, the leaving one included, leaves a
 * majority of them: three members in a decommission are three voters, never one. A leaving member that a
 * {@code NORMAL} one can replace gives up its seat (a removed node is dead: its seat would cost the cluster a
 * failure it could otherwise take). The configuration follows the view, so it changes only when a phase does.
 * Deterministic: every node computes the same group from the same view. Pure.
 */
public final class RaftPeers {
    /**
     * The Raft group of a cluster formed before clusters had ids ({@link ClusterView#LEGACY_CLUSTER}): the one group
     * every cluster's log used then, so such a cluster keeps its log across the upgrade.
     */
    public static final RaftGroupId GROUP_ID = groupId(ClusterView.LEGACY_CLUSTER);
    private final int portOffset;
    private final int maxVoters;

    /**
     * @param portOffset Raft port minus HTTP port, the same on every node
     * @param maxVoters  {@code dht.raft.voters}: at most this many voters (at least 1)
     */
    public RaftPeers(int portOffset, int maxVoters) {
        if (maxVoters < 1) {
            throw new IllegalArgumentException("dht.raft.voters must be at least 1, was " + maxVoters);
        }
        this.portOffset = portOffset;
        this.maxVoters = maxVoters;
    }

    /**
     * The Raft group id of the cluster {@code cluster}: its id itself, so the logs of two clusters never mix (Ratis
     * refuses every request of a group a server does not hold), even on the same hosts and ports.
     */
    public static RaftGroupId groupId(UUID cluster) {
        return RaftGroupId.valueOf(cluster);
    }

    /** A group of {@code cluster} with no peer: a node's log before the leader adds it (a joiner). */
    public static RaftGroup emptyGroup(UUID cluster) {
        return RaftGroup.valueOf(groupId(cluster));
    }

    /**
     * The group a node starts its log in when it waits for the leader's entries, in the cluster of {@code view}: a
     * member of {@code view} ({@code self}) is its group's only peer, a listener; a node that is no member has no peer
     * ({@link #emptyGroup}: the leader adds it). Used where the data dir holds no log (a member back on an empty disk,
     * a joiner) and on a restart, where the log's own configuration, once read, replaces this one.
     *
     * <p>Why a listener: Ratis 3.2.2 (RaftServerImpl.appendEntries) starts a server outside every configuration as
     * running once a leader's first append reaches it, election timer on, even when that append only finds the log
     * empty; if the timer fires before the entries follow, the election finds the server in no configuration
     * (LeaderElection, NOT_IN_CONF) and closes its part of the group. A leader retries a follower that was dead
     * for about 20 s every 5 s (its appender's default retry policy), longer than the 1-2 s timer, so a member back on
     * an empty disk closed, was started again and closed in turn, refusing every vote meanwhile (a server started
     * outside its configuration answers no vote until a leader reaches it). A listener runs at once, never stands
     * for election and votes for nobody until the leader's entries give it the log's configuration, which makes it a
     * voter where the view does: a member that lost its log votes again only once it holds the log's configuration.
     */
    public RaftGroup awaitingGroup(ClusterView view, URI self) {
        if (!view.isMember(self)) {
            return emptyGroup(view.cluster());
        }
        return RaftGroup.valueOf(groupId(view.cluster()), peer(self, false));
    }

    /** The peer id of the member at {@code node}. */
    public static RaftPeerId id(URI node) {
        return RaftPeerId.valueOf(node.getHost() + "_" + node.getPort());
    }

    /** The Raft peer of the member at {@code node}, as a voter ({@code FOLLOWER}) or a {@code LISTENER}. */
    public RaftPeer peer(URI node, boolean voter) {
        return RaftPeer.newBuilder()
                .setId(id(node))
                .setAddress(node.getHost() + ":" + (node.getPort() + portOffset))
                .setStartupRole(voter ? RaftPeerRole.FOLLOWER : RaftPeerRole.LISTENER)
                .build();
    }

    /** The voters of {@code view}: its {@code NORMAL} members in view order, then its {@code LEAVING} one, if any. */
    public List<URI> voters(ClusterView view) {
        List<URI> candidates = new ArrayList<>(view.members().size());
        for (MemberState state : List.of(MemberState.NORMAL, MemberState.LEAVING)) {
            view.members().stream().filter(member -> member.state() == state).map(Member::node)
                    .forEach(candidates::add);
        }
        int count = Math.min(maxVoters, candidates.size());
        if (count % 2 == 0 && count > 1) {
            count--;
        }
        return List.copyOf(candidates.subList(0, count));
    }

    /** The members of {@code view} that are not voters, in view order. */
    public List<URI> listeners(ClusterView view) {
        List<URI> voters = voters(view);
        return view.nodes().stream().filter(node -> !voters.contains(node)).toList();
    }

    /** The Raft group of {@code view}: its cluster's group id ({@link #groupId}), its voters and listeners. */
    public RaftGroup group(ClusterView view) {
        List<RaftPeer> peers = new ArrayList<>();
        List<URI> voters = voters(view);
        for (URI node : view.nodes()) {
            peers.add(peer(node, voters.contains(node)));
        }
        return RaftGroup.valueOf(groupId(view.cluster()), peers);
    }

    /** The member of {@code view} whose peer id is {@code id}, if any. */
    public static Optional<URI> node(ClusterView view, RaftPeerId id) {
        if (id == null || view == null) {
            return Optional.empty();
        }
        return view.nodes().stream().filter(node -> Objects.equals(id(node), id)).findFirst();
    }
}
