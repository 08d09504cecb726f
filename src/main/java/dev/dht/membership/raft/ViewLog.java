package dev.dht.membership.raft;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's part of the view log: its Raft server (Apache Ratis over gRPC, on {@code dht.raft.port}, with
 * mutual TLS from the peers' SSL bundle when TLS is on) running a {@link ViewStateMachine}, and a client that
 * appends {@link ViewCommand}s through the leader. Storage: {@code raft/} in the data dir (log, metadata and
 * snapshots of the view).
 *
 * <p>Election timeouts are 1-2 s (0.1-0.3 s for the first election after a start, so a cluster forms at once), so
 * a dead leader is replaced within a few seconds; the log is only on the path
 * of membership changes, never on a client request's. {@link #compareAndSet} and {@link #reconfigure} block (a
 * Raft round trip, or the retries while there is no leader): call them off the event loops (bounded-elastic).
 */
public final class ViewLog implements Closeable {
    /** A command or reconfiguration is retried {@link #RETRY_ATTEMPTS} times this far apart while there is no leader. */
    static final TimeDuration RETRY_SLEEP = TimeDuration.valueOf(500, TimeUnit.MILLISECONDS);
    static final int RETRY_ATTEMPTS = 20;
    /** How often an entry is appended while a reconfiguration waits ({@link #reconfigure}). */
    static final Duration NUDGE = Duration.ofSeconds(2);
    /** How often the watchdog checks that the Raft server runs. */
    static final Duration WATCH = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(ViewLog.class);

    private final URI self;
    private final RaftPeerId selfId;
    /** Used by the watchdog only. */
    private final FollowerStateRelease followerStateRelease;
    private final Path dataDir;
    private final RaftProperties properties = new RaftProperties();
    private final Parameters parameters = new Parameters();
    private final Consumer<ClusterView> applied;
    /** The state machine of the server started last: one per start, as Ratis runs it through one life cycle. */
    private volatile ViewStateMachine stateMachine;
    private final List<Consumer<Boolean>> leadership = new CopyOnWriteArrayList<>();
    private volatile RaftServer server;
    /** The group of the last {@link #start}, to start the server again with. */
    private RaftGroup startGroup;
    /** The id of that group: the cluster's ({@link RaftPeers#groupId}); the legacy one before a start. */
    private volatile RaftGroupId groupId = RaftPeers.GROUP_ID;
    private ScheduledExecutorService watchdog;
    private volatile boolean closed;
    private volatile String problem;
    /** The members a recovery of this node's log declared lost that are still members ({@link ViewLogRecovery}). */
    private volatile Set<URI> lost = Set.of();
    /** The epoch the recovery went on from: a view replayed from before it does not tell a lost member was removed. */
    private volatile long recoveredEpoch;
    /**
     * The view a member whose data dir held no log started with ({@link #startAwaiting}), until its log applies a
     * view ({@link #askForTheLog}); else null.
     */
    private volatile ClusterView awaited;
    private volatile RaftPeers awaitedPeers;
    /** Whether {@link #askForTheLog} logged that it asks (once per start). */
    private volatile boolean askedForTheLog;

    /**
     * @param self       this node's URL
     * @param raftPort   the port this node's Raft server listens on
     * @param dataDir    {@code dht.data-dir}; the log lives in its {@code raft/}
     * @param keyManager this node's certificate and key for mutual TLS, or null without TLS
     * @param trust      the trust manager of the peers' CA, or null without TLS
     * @param applied    called with each view the log applies (on Ratis's updater thread, in order; may block)
     */
    public ViewLog(URI self, int raftPort, Path dataDir, KeyManager keyManager, TrustManager trust,
                   Consumer<ClusterView> applied) {
        this(self, raftPort, dataDir, keyManager, trust, applied, properties -> { });
    }

    /**
     * As the public constructor, with {@code tuning} applied to the Ratis properties last: tests that need a
     * snapshot and a purged log after a few entries (the product takes a snapshot every 1 000 entries and purges
     * whole closed segments of 1 MB, at least {@code purge.gap} 1 024 entries apart).
     */
    ViewLog(URI self, int raftPort, Path dataDir, KeyManager keyManager, TrustManager trust,
            Consumer<ClusterView> applied, Consumer<RaftProperties> tuning) {
        this.self = Objects.requireNonNull(self, "self");
        this.selfId = RaftPeers.id(self);
        this.followerStateRelease = new FollowerStateRelease(selfId);
        this.dataDir = dataDir;
        this.applied = view -> {
            forgetLost(view);
            applied.accept(view);
        };
        this.stateMachine = new ViewStateMachine(this.applied, this::leaderChanged);
        RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
        GrpcConfigKeys.Server.setPort(properties, raftPort);
        RaftServerConfigKeys.setStorageDir(properties, List.of(storageDir(dataDir).toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(properties, TimeDuration.valueOf(1, TimeUnit.SECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(properties, TimeDuration.valueOf(2, TimeUnit.SECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(properties, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(properties, TimeDuration.valueOf(300, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(5, TimeUnit.SECONDS));
        // reads (readView) go through the leader's ReadIndex; a server that cannot catch up gives up after 3 s
        RaftServerConfigKeys.Read.setOption(properties, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, 1000);
        RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf("1MB"));
        RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf("512KB"));
        RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf("512KB"));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties, SizeInBytes.valueOf("256KB"));
        RaftServerConfigKeys.setStorageFreeSpaceMin(properties, SizeInBytes.valueOf("1MB"));
        // the voters follow the view (RaftPeers): 2 members have 1 voter, 3 have 3, so the join of a third member adds
        // 2 voters in one configuration change, which Ratis refuses by default; safe, as a change runs through joint
        // consensus (old and new majorities) and the added voters are listeners already, caught up with the log
        RaftServerConfigKeys.LeaderElection.setMemberMajorityAdd(properties, true);
        if (keyManager != null) {
            GrpcConfigKeys.TLS.setConf(parameters, new GrpcTlsConfig(keyManager, trust, true));
        }
        tuning.accept(properties);
    }

    /** Where the log of the data dir {@code dataDir} lives. */
    public static Path storageDir(Path dataDir) {
        return dataDir.resolve("raft");
    }

    /** True if {@code dataDir} holds the view log of the group {@code groupId} (this node was part of it before). */
    public static boolean exists(Path dataDir, RaftGroupId groupId) {
        return Files.isDirectory(storageDir(dataDir).resolve(groupId.getUuid().toString()));
    }

    /**
     * Starts the Raft server, with a state machine of its own (a server stopped and started again, as a test's node
     * is, does not reuse one that went through Ratis's life cycle). With a log in the data dir it recovers it ({@code group} only names the peers to try
     * until the log's own configuration is read); without one it formats a new one with {@code group} as its
     * first configuration: the founding members for a new cluster, or no peer for a node that the leader will add.
     * Blocks (storage, port).
     *
     * @throws UncheckedIOException if the server cannot start (the port is taken, the storage is unreadable)
     */
    public synchronized void start(RaftGroup group) {
        start(group, null);
    }

    /**
     * {@link #start(RaftGroup)} in the first configuration {@code peers} gives {@code view} ({@link RaftPeers#group}):
     * a founding member of a new cluster. Blocks (storage, port).
     *
     * @throws UncheckedIOException if the server cannot start
     */
    public synchronized void start(RaftPeers peers, ClusterView view) {
        start(peers.group(view));
    }

    /**
     * {@link #start(RaftGroup, ViewLogRecovery)} in the group {@code peers} gives a node waiting for the leader's
     * entries ({@link RaftPeers#awaitingGroup}): a node whose log is in its data dir, a member back on an empty disk,
     * or a node that the leader adds. Blocks (storage, port, and the members' answers if {@code recovery} runs; null:
     * no recovery).
     *
     * @throws UncheckedIOException if the server cannot start or the recovered configuration cannot be written
     */
    public synchronized void startAwaiting(RaftPeers peers, ClusterView view, ViewLogRecovery recovery) {
        boolean noLog = !exists(dataDir, RaftPeers.groupId(view.cluster()));
        awaitedPeers = peers;
        awaited = noLog && view.isMember(self) ? view : null;
        askedForTheLog = false;
        start(peers.awaitingGroup(view, self), recovery);
    }

    /**
     * As {@link #start(RaftGroup)}, first recovering the log from a lost majority of its voters if {@code recovery}
     * decides so ({@code dht.raft.recover=true}; null: no recovery): the server is started on its storage, the
     * recovery reads its configuration and log, and the server is started again on the recovered configuration.
     * Blocks (storage, port, the members' answers).
     *
     * @throws UncheckedIOException if the server cannot start or the recovered configuration cannot be written
     */
    public synchronized void start(RaftGroup group, ViewLogRecovery recovery) {
        startGroup = group;
        groupId = group.getGroupId();
        closed = false;
        readLost();
        startServer(group);
        if (recovery != null && !exists(dataDir, group.getGroupId())) {
            log.error("dht.raft.recover is set, but this node holds no view log: nothing to recover; ignored");
        } else if (recovery != null) {
            boolean recovered;
            try {
                recovered = recovery.run(server.getDivision(groupId));
            } catch (IOException e) {
                throw new UncheckedIOException("the view log cannot be recovered: its group does not start", e);
            }
            if (recovered) {
                closeServer();
                readLost();
                startServer(group);
            }
        }
        if (!lost.isEmpty()) {
            log.warn("members lost in the recovery of this node's view log, to be removed (removenode through this "
                    + "node): {}", lost);
        }
        if (watchdog == null) {
            watchdog = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "view-log-watchdog");
                thread.setDaemon(true);
                return thread;
            });
            watchdog.scheduleWithFixedDelay(this::watch, WATCH.toMillis(), WATCH.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void startServer(RaftGroup group) {
        stateMachine = new ViewStateMachine(applied, this::leaderChanged);
        try {
            server = RaftServer.newBuilder()
                    .setServerId(selfId)
                    .setGroup(group)
                    .setStateMachine(stateMachine)
                    .setProperties(properties)
                    .setParameters(parameters)
                    .setOption(exists(dataDir, group.getGroupId()) ? RaftStorage.StartupOption.RECOVER
                            : RaftStorage.StartupOption.FORMAT)
                    .build();
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the Raft server of " + self, e);
        }
    }

    /**
     * Why this node's part of the view log does not run, or null while it runs. Ratis closes a server's division
     * of the group when its state-machine updater fails, while its RPC server goes on (every append from the
     * leader is then refused as not ready): the watchdog sees it within {@link #WATCH}, logs one line, and starts
     * the server again from its storage, every {@link #WATCH} until it runs. Never blocks.
     */
    public String problem() {
        return problem;
    }

    /**
     * The members the recovery of this node's log declared lost (dead for good) and that are still members: a
     * removenode neither asks nor waits for them ({@link ViewLogRecovery}). Empty on a node whose log was never
     * recovered. Never blocks.
     */
    public Set<URI> lost() {
        return lost;
    }

    private void readLost() {
        recoveredEpoch = ViewLogRecovery.epoch(dataDir);
        lost = ViewLogRecovery.lost(dataDir);
    }

    /** Forgets the lost members {@code view} does not hold (removed): a later node at the same URL is no lost one. */
    private void forgetLost(ClusterView view) {
        Set<URI> known = lost;
        if (known.isEmpty() || view.epoch() <= recoveredEpoch || known.stream().allMatch(view::isMember)) {
            return;
        }
        Set<URI> still = known.stream().filter(view::isMember).collect(Collectors.toUnmodifiableSet());
        lost = still;
        log.info("lost members still to be removed: {}", still.isEmpty() ? "none" : still);
        try {
            ViewLogRecovery.keepLost(dataDir, still);
        } catch (UncheckedIOException e) {
            log.error("the recovery marker could not be rewritten; a restart counts the removed members as lost "
                    + "until the next view: {}", e.getMessage());
        }
    }

    /** The running Raft server (tests that break it). */
    RaftServer server() {
        return server;
    }

    /**
     * The watchdog's beat: releases the server if a listener's promotion froze it ({@link FollowerStateRelease}),
     * and starts it again if its division of the group died.
     */
    private void watch() {
        followerStateRelease.releaseStuck();
        String state = divisionState();
        if (state == null) {
            if (problem != null) {
                log.info("the view log's Raft server runs again");
                problem = null;
            }
            askForTheLog();
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            if (problem == null) {
                log.error("the view log's Raft server of {} is {}: this node is not ready; starting it again from "
                        + "its storage every {} s until it runs", self, state, WATCH.toSeconds());
            }
            problem = "the view log's Raft server is " + state;
            closeServer();
            try {
                startServer(startGroup);
            } catch (RuntimeException e) {
                problem = "the view log's Raft server cannot start: " + e.getMessage();
                log.debug("the view log's Raft server did not start again", e);
            }
        }
    }

    /**
     * The watchdog's beat on a member that started on an empty disk ({@link #awaited}) while its log is still empty
     * although a leader reaches it: appends, through that leader, an entry the state machine refuses (a
     * compare-and-set from the epoch before the awaited view, which the log has passed: that view came from a member
     * that applied it). Ratis's leader sends a follower nothing below the index it last saw it hold: on a heartbeat
     * refused as inconsistent it moves the follower's next index back up to that match index plus one
     * (LogAppenderBase.getNextIndexForInconsistency, Ratis 3.2.2), so while the log is idle an emptied member gets
     * heartbeats only, each refused, and neither the log nor its vote back. An append that carries entries from that
     * index is refused with the follower's true next index, which the leader takes: the log follows at once. Blocks
     * for a Raft round trip (the watchdog's thread); a failure is logged at debug level, the next beat asks again.
     */
    private void askForTheLog() {
        ClusterView view = awaited;
        if (view == null) {
            return;
        }
        if (stateMachine.view() != null) {
            awaited = null;
            log.info("the view log's entries reached this node again (it started on an empty disk)");
            return;
        }
        RaftPeerId leader = leader();
        if (leader == null) {
            return;
        }
        if (!askedForTheLog) {
            askedForTheLog = true;
            log.info("this node's view log is still empty although {} leads it: appending an entry through the leader so "
                    + "that it sends the log from its start (again every {} s until it does)", leader, WATCH.toSeconds());
        }
        appendRefusedEntry(view, () -> RaftClient.newBuilder().setRaftGroup(awaitedPeers.group(view))
                .setLeaderId(leader).setProperties(properties).setParameters(parameters)
                .setRetryPolicy(RetryPolicies.noRetry()).build());
    }

    /** Null while the server's division of the group is starting or running, else its state (or why none). */
    private String divisionState() {
        RaftServer running = server;
        if (running == null) {
            return closed ? null : "not started";
        }
        try {
            LifeCycle.State state = running.getDivision(groupId).getInfo().getLifeCycleState();
            return state.isClosingOrClosed() || state == LifeCycle.State.EXCEPTION ? state.name() : null;
        } catch (IOException | RuntimeException e) {
            return "without the group (" + e.getMessage() + ")";
        }
    }

    /** The view the log applied on this server so far; null before the cluster was formed (or this node added). */
    public ClusterView view() {
        return stateMachine.view();
    }

    /** Calls {@code listener} with true when this server becomes the leader and false when it stops being it. */
    public void onLeadership(Consumer<Boolean> listener) {
        leadership.add(listener);
    }

    private void leaderChanged(RaftPeerId leader) {
        boolean isSelf = selfId.equals(leader);
        log.info("view log leader: {}", leader == null ? "none" : leader);
        for (Consumer<Boolean> listener : leadership) {
            try {
                listener.accept(isSelf);
            } catch (RuntimeException e) {
                log.error("a leadership listener failed", e);
            }
        }
    }

    /** True if this server is the leader and has committed an entry of its term (so it may append). */
    public boolean isLeader() {
        try {
            DivisionInfo info = info();
            return info != null && info.isLeader() && info.isLeaderReady();
        } catch (RuntimeException starting) {
            return false;
        }
    }

    /**
     * The member of the applied view ({@link #view}) that leads the log as this server knows it; empty if there is no
     * leader, or none of those members is it. Never blocks.
     */
    public Optional<URI> leaderNode() {
        return RaftPeers.node(view(), leader());
    }

    /**
     * The place of the member at {@code node} in the configuration this server knows: the leader, a voter or a
     * listener; empty if it holds none there. Never blocks.
     */
    public Optional<LogRole> role(URI node) {
        RaftPeerId id = RaftPeers.id(node);
        RaftPeerId leader = leader();
        if (id.equals(leader)) {
            return Optional.of(LogRole.LEADER);
        }
        if (voters().contains(id)) {
            return Optional.of(LogRole.VOTER);
        }
        return listeners().contains(id) ? Optional.of(LogRole.LISTENER) : Optional.empty();
    }

    /** The leader's peer id as this server knows it, or null. */
    public RaftPeerId leader() {
        try {
            DivisionInfo info = info();
            return info == null ? null : info.getLeaderId();
        } catch (RuntimeException starting) {
            return null;
        }
    }

    /** The current term as this server knows it (0 before it started). */
    public long term() {
        try {
            DivisionInfo info = info();
            return info == null ? 0 : info.getCurrentTerm();
        } catch (RuntimeException starting) {
            return 0;
        }
    }

    /** The index of the last log entry this server applied (-1 before any). */
    public long appliedIndex() {
        try {
            DivisionInfo info = info();
            return info == null ? -1 : info.getLastAppliedIndex();
        } catch (RuntimeException starting) {
            return -1; // the server is still starting: its state machine updater does not exist yet
        }
    }

    private DivisionInfo info() {
        RaftServer running = server;
        if (running == null) {
            return null;
        }
        try {
            return running.getDivision(groupId).getInfo();
        } catch (IOException e) {
            return null;
        }
    }

    /** The Raft configuration this server knows: voters and listeners by peer id (empty before it is added). */
    public Set<RaftPeerId> voters() {
        return peers(RaftPeerRole.FOLLOWER);
    }

    /** The listeners (non-voting members) of the configuration this server knows. */
    public Set<RaftPeerId> listeners() {
        return peers(RaftPeerRole.LISTENER);
    }

    private Set<RaftPeerId> peers(RaftPeerRole role) {
        try {
            Collection<RaftPeer> peers = server.getDivision(groupId).getRaftConf().getCurrentPeers(role);
            return peers.stream().map(RaftPeer::getId).collect(Collectors.toSet());
        } catch (IOException | RuntimeException e) {
            return Set.of();
        }
    }

    /**
     * Appends "if the view is at {@code expect}, it becomes {@code next}" and waits until the log applied it.
     * Blocks: call off the event loops.
     *
     * @return the view now in the log: {@code next}
     * @throws Refused if the log's view moved on (another step came first), or there is no leader in time (a
     *                 majority of the voters is down or unreachable)
     */
    public ClusterView compareAndSet(long expect, ClusterView next) {
        RaftClientReply reply;
        try (RaftClient client = client()) {
            reply = client.io().send(Message.valueOf(new ViewCommand(expect, next).encode()));
        } catch (IOException e) {
            throw new Refused("the cluster's Raft log did not take the change (" + e.getMessage()
                    + "): is a majority of its voters down?");
        }
        if (!reply.isSuccess()) {
            throw new Refused("the cluster's Raft log refused the change: " + reply.getException());
        }
        String reason = ViewCommand.reasonOf(reply.getMessage().getContent().toStringUtf8());
        if (reason != null) {
            throw new Refused(reason);
        }
        return next;
    }

    /**
     * The view the log holds now, read linearizably through this server (Raft's ReadIndex, section 6.4 of Ongaro's
     * thesis, as Ratis's {@code LINEARIZABLE} read option does it): the leader confirms with a majority of the voters
     * that it still leads and names its commit index, and this server answers once it applied the log that far. So
     * a node that was removed (it gets no more entries), cut off from the leader, or in a log with no leader gets no
     * view. Blocks up to the read timeout: call off the event loops.
     *
     * @return the view, or empty if the cluster is not formed yet
     * @throws Refused if the read did not succeed (no leader, this server could not catch up in time)
     */
    public Optional<ClusterView> readView() {
        RaftClientReply reply;
        try (RaftClient client = client(RetryPolicies.noRetry())) {
            reply = client.io().sendReadOnly(Message.EMPTY, selfId);
        } catch (IOException | RuntimeException e) {
            throw new Refused("the view log gave no linearizable read: " + e.getMessage());
        }
        if (!reply.isSuccess()) {
            throw new Refused("the view log gave no linearizable read: " + reply.getException());
        }
        String text = reply.getMessage().getContent().toStringUtf8();
        return text.isEmpty() ? Optional.empty() : Optional.of(ClusterViewFile.decode(text));
    }

    /**
     * Makes the Raft configuration the voters and listeners of {@code view}, if it differs. Blocks until the
     * leader committed it: call off the event loops, on the leader.
     *
     * <p>While a reconfiguration waits, this server appends an entry every {@link #NUDGE} that the state machine
     * refuses (a compare-and-set from the epoch before its view: no view changes). Ratis stages a new peer until its
     * match index reaches the configuration's index, and only an append that carries entries raises a match index: a
     * joiner that already holds the whole log (its first staging timed out while it was slow to answer, a loaded
     * machine or a fresh JVM, and it caught up afterwards) answers heartbeats only, so without a new entry its second
     * staging never ends and every later reconfiguration, a rollback's too, is refused as "already in progress".
     *
     * @throws Refused if it could not be done in time
     */
    public void reconfigure(RaftGroup group) {
        List<RaftPeer> voters = peersOf(group, false);
        List<RaftPeer> listeners = peersOf(group, true);
        ScheduledExecutorService nudges = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "view-log-nudge");
            thread.setDaemon(true);
            return thread;
        });
        nudges.scheduleWithFixedDelay(this::appendRefusedEntry, NUDGE.toMillis(), NUDGE.toMillis(),
                TimeUnit.MILLISECONDS);
        try (RaftClient client = client()) {
            RaftClientReply reply = client.admin().setConfiguration(voters, listeners);
            if (!reply.isSuccess()) {
                throw new Refused("the Raft configuration was not changed: " + reply.getException());
            }
            log.info("view log configuration: voters {}, listeners {}", ids(voters), ids(listeners));
        } catch (IOException e) {
            // a RaftRetryFailureException names the attempts; its cause is the last attempt's failure
            throw new Refused("the Raft configuration was not changed: " + e.getMessage()
                    + (e.getCause() == null ? "" : ", the last attempt: " + e.getCause()));
        } finally {
            nudges.shutdownNow();
        }
    }

    /**
     * Appends an entry the state machine refuses, to raise the match index of a peer Ratis stages (see
     * {@link #reconfigure(RaftGroup)}). Blocks for a Raft round trip (on the nudge thread); a failure is logged only,
     * as the next nudge or the reconfiguration's retry follows.
     */
    private void appendRefusedEntry() {
        ClusterView held = view();
        if (held != null) {
            appendRefusedEntry(held, () -> client(RetryPolicies.noRetry()));
        }
    }

    /** A client of the view log, which may fail to be built. */
    private interface ClientSource {
        RaftClient open() throws IOException;
    }

    /**
     * Appends through {@code clients}' client a compare-and-set from the epoch before {@code held}, which the log
     * has passed ({@code held} came from a member that applied it), so the state machine refuses it: an entry that
     * changes no view. Blocks for a Raft round trip; a failure is logged at debug level only (the caller asks again).
     */
    private void appendRefusedEntry(ClusterView held, ClientSource clients) {
        try (RaftClient client = clients.open()) {
            client.io().send(Message.valueOf(new ViewCommand(held.epoch() - 1, held).encode()));
        } catch (IOException | RuntimeException e) {
            log.debug("an entry that changes no view was not appended: {}", e.toString());
        }
    }

    /** True if the configuration this server knows has exactly {@code group}'s voters and listeners. */
    public boolean hasConfiguration(RaftGroup group) {
        return ids(peersOf(group, false)).equals(voters()) && ids(peersOf(group, true)).equals(listeners());
    }

    /**
     * True if the configuration this server knows is the one {@code peers} gives {@code view}
     * ({@link RaftPeers#group}): its voters and listeners exactly. Never blocks.
     */
    public boolean hasConfiguration(RaftPeers peers, ClusterView view) {
        return hasConfiguration(peers.group(view));
    }

    /**
     * {@link #reconfigure(RaftGroup)} to the configuration {@code peers} gives {@code view}. Blocks until the leader
     * committed it: call off the event loops, on the leader.
     *
     * @throws Refused if it could not be done in time
     */
    public void reconfigure(RaftPeers peers, ClusterView view) {
        reconfigure(peers.group(view));
    }

    /** The listeners of {@code group} if {@code listeners}, else its voters. */
    private static List<RaftPeer> peersOf(RaftGroup group, boolean listeners) {
        return group.getPeers().stream()
                .filter(peer -> (peer.getStartupRole() == RaftPeerRole.LISTENER) == listeners).toList();
    }

    private static Set<RaftPeerId> ids(Collection<RaftPeer> peers) {
        return peers.stream().map(RaftPeer::getId).collect(Collectors.toSet());
    }

    /**
     * A client of the log through the peers this server knows, which reaches this server itself on loopback at the
     * port it is bound to (its peer address may name another port while the server port is chosen at random: tests).
     * Fails with an IOException while it knows none: a server started on an empty disk has no configuration until
     * the leader has reached it.
     */
    private RaftClient client() throws IOException {
        return client(RetryPolicies.retryUpToMaximumCountWithFixedSleep(RETRY_ATTEMPTS, RETRY_SLEEP));
    }

    private RaftClient client(RetryPolicy retries) throws IOException {
        if (server == null) {
            throw new IOException("this node's view log has not started (a founding member that has yet to learn its "
                    + "cluster's id)");
        }
        RaftGroup known = server.getDivision(groupId).getGroup();
        if (known.getPeers().isEmpty()) {
            throw new IOException("this node has not heard from the view log's leader since it started on an empty "
                    + "disk; ask again in a few seconds or ask another member");
        }
        int boundPort = server.getServerRpc().getInetSocketAddress().getPort();
        List<RaftPeer> peers = known.getPeers().stream()
                .map(peer -> peer.getId().equals(selfId)
                        ? RaftPeer.newBuilder(peer).setAddress("127.0.0.1:" + boundPort).build() : peer)
                .toList();
        RaftGroup group = RaftGroup.valueOf(groupId, peers);
        return RaftClient.newBuilder()
                .setRaftGroup(group)
                .setProperties(properties)
                .setParameters(parameters)
                .setRetryPolicy(retries)
                .build();
    }

    /** Stops the Raft server and its watchdog (shutdown). Blocks briefly. */
    @Override
    public synchronized void close() {
        closed = true;
        if (watchdog != null) {
            watchdog.shutdownNow();
            watchdog = null;
        }
        closeServer();
    }

    private void closeServer() {
        if (server != null) {
            try {
                server.close();
            } catch (IOException | RuntimeException e) {
                log.warn("closing the Raft server failed: {}", e.toString());
            }
            server = null;
        }
    }

    /** The log did not take a command: the reason says why (409 at the actuator). */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }

}
