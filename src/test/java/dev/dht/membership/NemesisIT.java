package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.HistoryLoad;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * A randomized nemesis over node processes (after Jepsen's): seeded, under a steady checked load ({@link HistoryLoad}:
 * 1/1, 2/3 and 3/3 writes and deletes, reads at each key's setting), {@code nemesis.rounds} rounds each run one random
 * membership change (a join; on four or more members also a decommission or a removenode of a member killed for
 * good) and, once the change reached a random phase (or a later one, or ended: a phase may last milliseconds), one
 * random fault on a random node (the joiner included): {@code kill -9} for good or with a restart, SIGSTOP for 1-15 s,
 * a data dir wiped (killed, emptied, started again), or a {@code kill -9} and restart of the view log's leader. A
 * removenode's round, whose removed member is already dead for good, draws neither a kill for good nor a wiped disk
 * (two members dead cannot be removed, docs/membership.md's Limits, and two lost copies are beyond what a 2/3 write
 * survives): a restart takes their place.
 *
 * <p>After each round the cluster is brought back to a settled state: a member dead for good is removed, nodes
 * that are no members are stopped, new nodes join up to three members; then every member must be ready and the
 * history is checked. Checked: no acknowledged write lost, no read older than a write acknowledged before it began
 * (at 2/3 and 3/3, and at 1/1 until a node is lost for good or a disk wiped), no deleted key back, no change left in
 * progress, every member ready ({@code /v0/status} 200), no cleanup pending. Not checked: availability (a 504 at
 * 2/3 is counted, not a failure, and a read-back answered 504 is asked again: a removenode's dead member and a
 * frozen one are two replicas away; a 504 write is not acknowledged and may or may not be there).
 *
 * <p>It prints its seed, and each round's change, fault and phase; {@code -Dnemesis.seed=S} replays one (the
 * faults' timing still varies with the machine), {@code -Dnemesis.seed=random} draws one, {@code -Dnemesis.rounds=N}
 * runs N rounds (default {@value #DEFAULT_ROUNDS} with seed {@value #DEFAULT_SEED}: CI's short version).
 */
class NemesisIT {
    /** CI's seed: its rounds were run green on the build machine. */
    static final long DEFAULT_SEED = 29;
    static final int DEFAULT_ROUNDS = 2;
    private static final int FAILURE_TIMEOUT_S = 10;
    private static final Duration CHANGE_TIME = Duration.ofMinutes(3);
    private static final List<String> JVM = List.of("-Xmx256m",
            "-Ddht.change-failure-timeout=" + FAILURE_TIMEOUT_S + "s");
    private static final List<String> PHASES = List.of("write-both-read-old", "streaming", "write-both-read-new");

    /** The change of a round. */
    enum Change { JOIN, DECOMMISSION, REMOVENODE }

    /** The fault of a round. */
    enum Fault { KILL_FOR_GOOD, KILL_AND_RESTART, STOP, WIPE, RESTART_LEADER }

    /** Every node process started, by base URL: the founders' and the joiners'; the latest of each node. */
    private final Map<URI, NodeProcess> processes = new LinkedHashMap<>();
    private final Map<URI, Path> dataDirs = new HashMap<>();
    private final Map<URI, String> names = new HashMap<>();
    /** The members, as the test last saw them. */
    private final List<URI> members = new ArrayList<>();
    private final Map<Fault, Integer> faults = new EnumMap<>(Fault.class);

    /** Kept when the test fails: the nodes' logs, one file per start. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private ProcessCluster cluster;
    private ClusterAdmin admin;
    private Random random;
    private int joined;
    private int launches;
    private int histories;

    @AfterEach
    void stopNodes() {
        processes.values().forEach(NodeProcess::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void randomChangesUnderRandomFaultsLoseNoAcknowledgedWrite() throws Exception {
        String seedProperty = System.getProperty("nemesis.seed", Long.toString(DEFAULT_SEED));
        long seed = seedProperty.equals("random") ? System.nanoTime() : Long.parseLong(seedProperty);
        int rounds = Integer.getInteger("nemesis.rounds", DEFAULT_ROUNDS);
        String run = "NemesisIT seed " + seed;
        System.out.printf("NemesisIT: seed %d, %d rounds (-Dnemesis.seed=%d -Dnemesis.rounds=%d replays it); node"
                + " logs in %s%n", seed, rounds, seed, rounds, dir);
        long started = System.nanoTime();
        random = new Random(seed);
        cluster = ProcessCluster.start(3, dir, JVM);
        admin = new ClusterAdmin(cluster.secret());
        for (int i = 0; i < 3; i++) {
            URI node = cluster.url(i);
            members.add(node);
            processes.put(node, cluster.node(i));
            dataDirs.put(node, cluster.dataDir(i));
            names.put(node, "node-" + i);
        }
        try (HistoryLoad load = new HistoryLoad("n", members)) {
            load.preload();
            load.tolerateUnavailable();
            load.start();
            for (int round = 0; round < rounds; round++) {
                round(round, load, run);
            }
            load.stop();
            load.assertNoFailures(run);
            load.assertEveryWriteReadable(members, null);
            histories++;
            admin.awaitSettled(members, CHANGE_TIME);
            for (URI member : members) {
                awaitReady(member);
                JsonNode view = admin.view(member);
                assertThat(view.get("change").isNull()).as("change on %s: %s (%s)", member, view, run).isTrue();
                assertThat(view.get("cleanupPending").asBoolean()).as("cleanup pending on %s (%s)", member, run)
                        .isFalse();
            }
            System.out.printf("%s: %d rounds in %d s, faults %s, writes acknowledged %d, reads checked %d, keys %d,"
                            + " histories checked %d, 504s %d, 503s %s%n", run, rounds,
                    (System.nanoTime() - started) / 1_000_000_000, faults, load.acknowledged.sum(),
                    load.readsChecked.sum(), load.keys.size(), histories, load.timeouts.sum(), load.overloaded);
        }
    }

    /** One round: a random change, a random fault at a random phase, then back to a settled cluster, checked. */
    private void round(int round, HistoryLoad load, String run) throws Exception {
        long started = System.nanoTime();
        int size = members.size();
        Change change = size <= 3 ? Change.JOIN
                : size >= 5 ? Change.values()[1 + random.nextInt(2)] : Change.values()[random.nextInt(3)];
        Fault fault = Fault.values()[random.nextInt(Fault.values().length)];
        if (change == Change.REMOVENODE && (fault == Fault.KILL_FOR_GOOD || fault == Fault.WIPE)) {
            fault = Fault.KILL_AND_RESTART;
        }
        String phase = PHASES.get(random.nextInt(PHASES.size()));
        URI changing = change == Change.JOIN ? null : members.get(random.nextInt(size));
        int stopSeconds = 1 + random.nextInt(15);
        URI through = members.stream().filter(member -> !member.equals(changing)).findFirst().orElseThrow();

        System.out.printf("%s round %d: %s of %s, members %s; %s at %s%n", run, round, change,
                changing == null ? "a new node" : changing, members,
                fault == Fault.STOP ? "SIGSTOP " + stopSeconds + " s" : fault, phase);
        URI joiner = null;
        switch (change) {
            case JOIN -> joiner = startJoiner();
            case DECOMMISSION -> post(through, "decommission", changing);
            case REMOVENODE -> {
                load.avoid(changing);
                processes.get(changing).kill();
                load.singleCopiesMayBeLost();
                post(through, "removenode", changing);
            }
        }
        URI target = joiner != null ? joiner : changing;
        List<URI> candidates = new ArrayList<>(members);
        if (joiner != null) {
            candidates.add(joiner);
        }
        if (change == Change.REMOVENODE) {
            candidates.remove(changing);
        }
        URI victim = candidates.get(random.nextInt(candidates.size()));

        String reached = awaitPhase(through, target, change == Change.JOIN, phase);
        if (fault == Fault.RESTART_LEADER) {
            victim = leader(through);
        }
        System.out.printf("%s round %d: %s on %s at %s of the %s of %s%n", run, round, fault, victim, reached, change,
                target);
        inject(fault, victim, stopSeconds, load);
        faults.merge(fault, 1, Integer::sum);
        String outcome = settle(load, target, victim);
        load.assertNoFailures(run + " round " + round);
        load.assertEveryWriteReadable(members, null);
        histories++;
        System.out.printf("%s round %d: %s %s; members %s; %d s%n", run, round, change, outcome, members,
                (System.nanoTime() - started) / 1_000_000_000);
    }

    private void inject(Fault fault, URI victim, int stopSeconds, HistoryLoad load) throws Exception {
        NodeProcess process = processes.get(victim);
        load.avoid(victim);
        switch (fault) {
            case KILL_FOR_GOOD -> {
                process.kill();
                load.singleCopiesMayBeLost();
            }
            case KILL_AND_RESTART, RESTART_LEADER -> {
                process.kill();
                launch(victim);
            }
            case STOP -> {
                NodeProcess.signal("-STOP", List.of(process.pid()));
                try {
                    Thread.sleep(stopSeconds * 1_000L);
                } finally {
                    NodeProcess.signal("-CONT", List.of(process.pid()));
                }
            }
            case WIPE -> {
                process.kill();
                load.singleCopiesMayBeLost(); // the one copy of a 1/1 write may have been on it
                assertThat(FileSystemUtils.deleteRecursively(dataDirs.get(victim))).isTrue();
                launch(victim);
            }
        }
    }

    /**
     * Waits until the round's change ended, removes every member that is dead (killed for good), stops every node
     * that is no member (a joiner rolled back, a node that left), lets new nodes join up to three members, waits
     * until every member is settled and ready, and gives the load the members again. Returns what became of the
     * change.
     */
    private String settle(HistoryLoad load, URI target, URI victim) throws Exception {
        List<URI> live = members.stream().filter(this::alive).toList();
        URI through = live.stream().filter(member -> !member.equals(target) && !member.equals(victim)).findFirst()
                .orElse(live.get(0));
        JsonNode view = admin.awaitNoChange(through, CHANGE_TIME);
        String outcome = memberUrls(view).contains(target.toString()) ? "ended with it a member"
                : "ended with it no member";
        for (String member : memberUrls(view)) {
            URI node = URI.create(member);
            if (!alive(node)) {
                post(through, "removenode", node);
                admin.awaitNoChange(through, CHANGE_TIME);
            }
        }
        members.clear();
        for (String member : memberUrls(admin.awaitNoChange(through, CHANGE_TIME))) {
            members.add(URI.create(member));
        }
        for (Map.Entry<URI, NodeProcess> node : processes.entrySet()) {
            if (!members.contains(node.getKey()) && node.getValue().isAlive()) {
                load.avoid(node.getKey()); // its clients leave a node before it is stopped (a decommissioned one)
                node.getValue().close();
            }
        }
        while (members.size() < 3) { // a member lost for good: a new node takes its place, with no fault
            URI joiner = startJoiner();
            admin.awaitMembers(through, members.size() + 1, CHANGE_TIME);
            members.add(joiner);
        }
        admin.awaitSettled(members, CHANGE_TIME);
        for (URI member : members) {
            awaitReady(member);
        }
        load.writeThrough(members);
        load.readThrough(members);
        return outcome;
    }

    /** Starts a new node that joins through the members; returns its base URL. */
    private URI startJoiner() throws IOException {
        URI url = URI.create("http://localhost:" + NodeProcess.freePort());
        String name = "joiner-" + joined++;
        names.put(url, name);
        dataDirs.put(url, dir.resolve("data-" + name).toAbsolutePath());
        launch(url);
        return url;
    }

    /**
     * Starts {@code node} (again) on its port and data dir, the members as its seeds, without waiting for it to be
     * up; each start logs to a file of its own.
     */
    private void launch(URI node) throws IOException {
        List<String> seeds = members.stream().map(URI::toString).toList();
        processes.put(node, NodeProcess.start(node.getPort(), dataDirs.get(node),
                dir.resolve(names.get(node) + "-" + launches++ + ".log"), JVM, "--dht.self=" + node,
                "--dht.nodes=" + String.join(",", seeds), "--dht.cluster-secret=" + cluster.secret(),
                "--dht.stream-rate=2000"));
    }

    private boolean alive(URI node) {
        NodeProcess process = processes.get(node);
        return process != null && process.isAlive();
    }

    /**
     * Waits until the change of {@code node} has begun on {@code through}, then until it shows {@code phase} or a later
     * one (or rollback), or the change ended; returns the phase seen then, or "the end".
     */
    private String awaitPhase(URI through, URI node, boolean join, String phase) {
        int aimed = PHASES.indexOf(phase);
        AtomicBoolean begun = new AtomicBoolean();
        return await("the change of " + node + " at " + phase + " or later").atMost(CHANGE_TIME)
                .pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() -> {
                    JsonNode view = admin.view(through);
                    JsonNode change = view.get("change");
                    if (!change.isNull() && change.get("node").asText().equals(node.toString())) {
                        begun.set(true);
                        String now = change.get("phase").asText();
                        return PHASES.indexOf(now) >= aimed || !PHASES.contains(now) ? now : null;
                    }
                    boolean member = memberUrls(view).contains(node.toString());
                    return begun.get() || member == join ? "the end" : null;
                }, Objects::nonNull);
    }

    /** The view log's leader as {@code through} knows it, once it names a live node. */
    private URI leader(URI through) {
        return await("a live log leader").atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100))
                .ignoreExceptions().until(() -> URI.create(admin.view(through).get("leader").asText()), this::alive);
    }

    /** Waits until {@code GET /v0/status} of {@code member} answers 200 (a node rebuilding answers 503). */
    private void awaitReady(URI member) {
        await("/v0/status 200 from " + member).atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250))
                .until(() -> admin.status(member) == 200);
    }

    /** {@code POST /actuator/cluster/ACTION {"node": node}} on {@code through}, sent again while refused (409). */
    private void post(URI through, String action, URI node) {
        HttpResponse<String> answer = await().atMost(CHANGE_TIME).pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(() -> admin.post(through, "/actuator/cluster/" + action, "{\"node\":\"" + node + "\"}"),
                        response -> response.statusCode() != 409);
        assertThat(answer.statusCode()).as("%s of %s: %s", action, node, answer.body()).isEqualTo(202);
    }

    private static List<String> memberUrls(JsonNode view) {
        return view.get("members").findValuesAsText("node");
    }
}
