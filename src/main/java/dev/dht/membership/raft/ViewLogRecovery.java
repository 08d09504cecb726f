package dev.dht.membership.raft;

import dev.dht.cluster.ClusterView;
import dev.dht.node.DurableFile;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.AtomicFileOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery of the view log from a lost majority of its voters ({@code dht.raft.recover=true} on a survivor; etcd's
 * {@code --force-new-cluster}, ScyllaDB's group 0 recovery). Raft cannot commit without a majority of its voters,
 * so with two disks of three lost no membership change can ever run again. The survivor's log gets a new
 * configuration in which it is the only voter, written to Ratis's {@code raft-meta.conf} at the index after the
 * log's last entry (Ratis takes the configuration of the highest index, from that file or from its log, as Ratis
 * shell's {@code local raftMetaConf} does), so it elects itself and commits what its log holds: the view goes on
 * from the newest one the survivor holds, its epoch never goes back. The members that did not answer are <em>lost</em>:
 * recorded in the marker file {@value #MARKER} of the data dir, they are neither asked nor waited for by the
 * removenode that takes each of them out ({@link ViewLog#lost}); a lost member is forgotten once a view without it is
 * applied.
 *
 * <p>Safe to leave on: it acts once (a start that finds the marker logs one error line and starts as usual; delete
 * the marker to recover again from a later loss), never while a majority of the log's voters answers (the log is
 * healthy: recovering would fork it), and never while a member answers with a newer epoch (recover on that one).
 * Members are asked twice, {@link #RECHECK} apart, so a cluster whose nodes start at once is not taken for lost.
 * Blocking (files, the members' answers): start-up only.
 */
public final class ViewLogRecovery {
    /** The marker file in the data dir: when this node's log was recovered, and the members it declared lost. */
    public static final String MARKER = "view-log-recovered";
    /** Ratis's file of the last configuration of a group's storage, in its {@code current/} directory. */
    static final String META_CONF = "raft-meta.conf";
    /** Pause before the members are asked a second time. */
    static final Duration RECHECK = Duration.ofSeconds(3);
    private static final Logger log = LoggerFactory.getLogger(ViewLogRecovery.class);

    private final URI self;
    private final Path dataDir;
    private final RaftPeers peers;
    private final Supplier<ClusterView> view;
    private final Function<List<URI>, Map<URI, ClusterView>> ask;

    /**
     * @param self    this node's URL
     * @param dataDir {@code dht.data-dir}, where the marker goes
     * @param peers   where the members' Raft servers listen
     * @param view    the newest view this node holds (its stored one)
     * @param ask     the view of each of the given members that answers (absent: no answer); may block
     */
    public ViewLogRecovery(URI self, Path dataDir, RaftPeers peers, Supplier<ClusterView> view,
                           Function<List<URI>, Map<URI, ClusterView>> ask) {
        this.self = self;
        this.dataDir = dataDir;
        this.peers = peers;
        this.view = view;
        this.ask = ask;
    }

    /**
     * What a start with {@code dht.raft.recover=true} does.
     *
     * @param recovers true if the log is recovered with this node as its only voter
     * @param lost     the members declared lost (empty unless it recovers)
     * @param reason   one line for the log
     */
    public record Decision(boolean recovers, Set<URI> lost, String reason) {
        public Decision {
            lost = Set.copyOf(lost);
        }
    }

    /**
     * Decides whether {@code self} recovers its log. Pure.
     *
     * @param view    the newest view it holds, or null
     * @param voters  the voters of its log's configuration (of both sides of a configuration in transition)
     * @param answers the view of each member that answered (this node not among them)
     * @param marker  the marker's content if it recovered before
     */
    public static Decision decide(URI self, ClusterView view, List<Collection<RaftPeerId>> voters,
                                  Map<URI, ClusterView> answers, Optional<String> marker) {
        if (marker.isPresent()) {
            return new Decision(false, Set.of(), "dht.raft.recover is set, but this node's view log was recovered "
                    + "already (" + marker.get().lines().findFirst().orElse("") + "): the setting is ignored; unset it "
                    + "(to recover from another lost majority, delete the data dir's " + MARKER + " first)");
        }
        if (view == null || !view.isMember(self)) {
            return new Decision(false, Set.of(), "dht.raft.recover is set, but this node holds no view it is a member "
                    + "of: nothing to recover from; the setting is ignored");
        }
        for (Map.Entry<URI, ClusterView> answer : answers.entrySet()) {
            if (answer.getValue().epoch() > view.epoch()) {
                return new Decision(false, Set.of(), "dht.raft.recover is refused: " + answer.getKey() + " holds epoch "
                        + answer.getValue().epoch() + ", newer than this node's " + view.epoch()
                        + "; recover on the survivor that holds the newest epoch");
            }
        }
        for (Collection<RaftPeerId> side : voters) {
            long answering = side.stream().filter(id -> id.equals(RaftPeers.id(self))
                    || RaftPeers.node(view, id).filter(answers::containsKey).isPresent()).count();
            if (!side.isEmpty() && answering * 2 > side.size()) {
                return new Decision(false, Set.of(), "dht.raft.recover is refused: " + answering + " of the "
                        + side.size() + " voters of the view log answer, a majority: the log is not lost, and "
                        + "recovering would fork it; the setting is ignored, unset it");
            }
        }
        Set<URI> lost = view.nodes().stream().filter(node -> !node.equals(self) && !answers.containsKey(node))
                .collect(Collectors.toCollection(LinkedHashSet::new));
        return new Decision(true, lost, "the view log is recovered from a lost majority: " + self + " is its only "
                + "voter from now on, at epoch " + view.epoch() + "; lost members " + lost + " (remove each with "
                + "removenode through this node, then add new nodes)");
    }

    /**
     * Decides, and if so recovers the log of {@code division} (started on the log's storage; the caller closes it and
     * starts it again, so Ratis reads the new configuration) and writes the marker. Blocks (members, files).
     *
     * @return true if it recovered the log
     * @throws UncheckedIOException if a file cannot be written
     */
    boolean run(RaftServer.Division division) {
        RaftConfiguration conf = division.getRaftConf();
        List<Collection<RaftPeerId>> voters = new ArrayList<>();
        voters.add(ids(conf.getCurrentPeers()));
        voters.add(ids(conf.getPreviousPeers()));
        ClusterView held = view.get();
        Optional<String> marker = marker(dataDir);
        List<URI> others = held == null ? List.of()
                : held.nodes().stream().filter(node -> !node.equals(self)).toList();
        Map<URI, ClusterView> answers = new LinkedHashMap<>(ask.apply(others));
        Decision decision = decide(self, held, voters, answers, marker);
        if (decision.recovers()) {
            sleep(RECHECK);
            answers.putAll(ask.apply(others));
            decision = decide(self, held, voters, answers, marker);
        }
        if (!decision.recovers()) {
            log.error(decision.reason());
            return false;
        }
        long index = division.getRaftLog().getNextIndex();
        Path metaConf = division.getRaftStorage().getStorageDir().getCurrentDir().toPath().resolve(META_CONF);
        RaftPeer voter = peers.peer(self, true);
        LogEntryProto entry = LogEntryProto.newBuilder()
                .setConfigurationEntry(RaftConfigurationProto.newBuilder().addPeers(voter.getRaftPeerProto()))
                .setIndex(index)
                .build();
        try (OutputStream out = new AtomicFileOutputStream(metaConf.toFile())) {
            entry.writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the recovered configuration to " + metaConf, e);
        }
        writeMarker(dataDir, "recovered-at=" + Instant.now() + " epoch=" + held.epoch() + " index=" + index,
                decision.lost());
        log.error(decision.reason());
        return true;
    }

    /** The members the recovery of {@code dataDir}'s log declared lost and not yet forgotten (empty without one). */
    public static Set<URI> lost(Path dataDir) {
        return marker(dataDir).map(text -> text.lines().filter(line -> line.startsWith("lost="))
                        .map(line -> URI.create(line.substring("lost=".length())))
                        .collect(Collectors.toCollection(LinkedHashSet::new)))
                .map(Set::copyOf)
                .orElse(Set.of());
    }

    /** The epoch the recovery of {@code dataDir}'s log went on from (0 without one). */
    public static long epoch(Path dataDir) {
        return marker(dataDir).flatMap(text -> text.lines().findFirst()).stream()
                .flatMap(first -> Arrays.stream(first.split(" ")))
                .filter(part -> part.startsWith("epoch="))
                .mapToLong(part -> Long.parseLong(part.substring("epoch=".length())))
                .findFirst().orElse(0);
    }

    /** Rewrites the marker with {@code lost} only (members no view holds any more are forgotten). Blocks. */
    static void keepLost(Path dataDir, Set<URI> lost) {
        Optional<String> text = marker(dataDir);
        if (text.isPresent()) {
            writeMarker(dataDir, text.get().lines().findFirst().orElse(""), lost);
        }
    }

    private static Optional<String> marker(Path dataDir) {
        Path file = dataDir.resolve(MARKER);
        try {
            return Files.exists(file) ? Optional.of(Files.readString(file, StandardCharsets.UTF_8)) : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** Writes the marker: {@code first} (when, from which epoch and log index), then a line per lost member. */
    static void writeMarker(Path dataDir, String first, Set<URI> lost) {
        StringBuilder text = new StringBuilder(first).append('\n');
        lost.forEach(node -> text.append("lost=").append(node).append('\n'));
        try {
            DurableFile.replace(dataDir.resolve(MARKER), text.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dataDir.resolve(MARKER), e);
        }
    }

    private static Set<RaftPeerId> ids(Collection<RaftPeer> peers) {
        return peers.stream().map(RaftPeer::getId).collect(Collectors.toSet());
    }

    private static void sleep(Duration pause) {
        try {
            Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
