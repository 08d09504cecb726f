package dev.dht.membership.raft;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.node.DurableFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster view as the state machine of the Raft log: a compare-and-set register. Each log entry is a
 * {@link ViewCommand}: "if the view's epoch is {@code expect}, the view becomes {@code next}" (whose epoch must be
 * {@code expect + 1}). Every server applies the same entries in the same order, so the epoch is a function of the
 * log and two different views of one epoch cannot exist; a step computed from an old view (a second joiner, a
 * deposed leader's next phase) is refused, the log unchanged, as is a view of another cluster id. Before the first
 * entry the view is absent (epoch 0): the cluster is not formed yet.
 *
 * <p>A snapshot is the view in {@link ClusterViewFile}'s text. Every applied view goes to the listener (the node's
 * {@code Membership}, which stores and adopts it): called on Ratis's state-machine updater thread, in log order; it
 * may block on the file.
 */
public final class ViewStateMachine extends BaseStateMachine {
    private static final Logger log = LoggerFactory.getLogger(ViewStateMachine.class);
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final Consumer<ClusterView> listener;
    private final Consumer<RaftPeerId> leaderListener;
    private volatile ClusterView view;

    /**
     * @param listener       called with every view the log applies, in order (also those replayed at start)
     * @param leaderListener called with the new leader's id whenever the leader changes (null id: unknown)
     */
    public ViewStateMachine(Consumer<ClusterView> listener, Consumer<RaftPeerId> leaderListener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        this.leaderListener = Objects.requireNonNull(leaderListener, "leaderListener");
    }

    /** The view the log has applied so far; null before the cluster is formed. */
    public ClusterView view() {
        return view;
    }

    /** The epoch the log has applied so far; 0 before the cluster is formed. */
    public long epoch() {
        ClusterView current = view;
        return current == null ? 0 : current.epoch();
    }

    /** Loads the latest snapshot, if any, and runs (the life cycle Ratis checks before installing a snapshot). */
    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        getLifeCycle().startAndTransition(() -> {
            super.initialize(server, groupId, raftStorage);
            storage.init(raftStorage);
            load(storage.loadLatestSnapshot());
        }, IOException.class);
    }

    /**
     * Stops applying before the leader installs a snapshot here (a follower too far behind, a joiner or a member on
     * an empty disk after the leader purged the log): Ratis reloads only a paused state machine.
     */
    @Override
    public synchronized void pause() {
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    /** Loads the snapshot just installed, then runs again. */
    @Override
    public synchronized void reinitialize() throws IOException {
        load(storage.loadLatestSnapshot());
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    private synchronized void load(SingleFileSnapshotInfo snapshot) throws IOException {
        if (snapshot == null || !Files.exists(snapshot.getFile().getPath())) {
            return;
        }
        Path file = snapshot.getFile().getPath();
        ClusterView loaded = ClusterViewFile.decode(Files.readString(file, StandardCharsets.UTF_8));
        TermIndex last = SimpleStateMachineStorage.getTermIndexFromSnapshotFile(file.toFile());
        if (view == null || loaded.epoch() > view.epoch()) {
            view = loaded;
            adopt(loaded);
        }
        updateLastAppliedTermIndex(last);
    }

    /**
     * Hands {@code applied} to the listener; a failure there is logged, never thrown: Ratis closes the server's
     * division of the group when its state-machine updater fails, and the log would stop here for good.
     */
    private void adopt(ClusterView applied) {
        try {
            listener.accept(applied);
        } catch (RuntimeException e) {
            log.error("the view of epoch {} could not be adopted here", applied.epoch(), e);
        }
    }

    @Override
    public synchronized long takeSnapshot() throws IOException {
        ClusterView current = view;
        TermIndex applied = getLastAppliedTermIndex();
        if (current == null || applied == null) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        Path file = storage.getSnapshotFile(applied.getTerm(), applied.getIndex()).toPath();
        DurableFile.replace(file, ClusterViewFile.encode(current).getBytes(StandardCharsets.UTF_8)); // never torn
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file, null), applied));
        return applied.getIndex();
    }

    /** Refuses a command that does not parse before it is appended (the client gets the error). */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request)
            throws IOException {
        TransactionContext transaction = super.startTransaction(request);
        try {
            ViewCommand.decode(request.getMessage().getContent().toStringUtf8());
        } catch (IllegalArgumentException e) {
            transaction.setException(e);
        }
        return transaction;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext transaction) {
        LogEntryProto entry = transaction.getLogEntry();
        TermIndex termIndex = TermIndex.valueOf(entry);
        String answer;
        ClusterView applied = null;
        synchronized (this) {
            ViewCommand command = ViewCommand.decode(
                    entry.getStateMachineLogEntry().getLogData().toStringUtf8());
            long current = epoch();
            ClusterView held = view;
            if (held != null && !command.next().sameCluster(held)) {
                answer = ViewCommand.refusal("the view is of cluster " + command.next().cluster() + ", this log's of "
                        + held.cluster());
            } else if (command.expect() != current) {
                answer = ViewCommand.refusal("the cluster view is at epoch " + current + ", not " + command.expect()
                        + ": it moved on");
            } else {
                view = command.next();
                applied = view;
                answer = ViewCommand.ACCEPTED;
            }
            updateLastAppliedTermIndex(termIndex);
        }
        if (applied != null) {
            adopt(applied);
        }
        return CompletableFuture.completedFuture(Message.valueOf(answer));
    }

    /** Answers the view this server has applied (a read of the log's state, not linearizable). */
    @Override
    public CompletableFuture<Message> query(Message request) {
        ClusterView current = view;
        return CompletableFuture.completedFuture(Message.valueOf(current == null ? "" : ClusterViewFile.encode(current)));
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        leaderListener.accept(newLeaderId);
    }
}
