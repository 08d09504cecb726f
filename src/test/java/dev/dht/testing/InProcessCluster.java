package dev.dht.testing;

import dev.dht.DhtApplication;
import dev.dht.cluster.Membership;
import dev.dht.membership.raft.ViewLog;
import dev.dht.node.RebuildGate;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.FileSystemUtils;

/**
 * N real nodes in this JVM, each its own Spring context with its own port, data dir, Netty resources and
 * LevelDB, talking to each other over HTTP on loopback (HTTPS when the settings name {@code dht.tls.bundle}) (after Cassandra's in-JVM dtests). A node can be
 * stopped keeping its data and started again on the same port and dir. Each node's replica client carries a
 * {@link ReplicaFaults} filter and its server a {@link ServerFaults} filter for fault injection, and a node may
 * run on its own wall clock (a {@link Clock} bean, which the node's hybrid logical clock then reads).
 *
 * <p>A test starts one with {@link #start(int, Path, Map)} and closes it, or registers one made by
 * {@link #of(int, Map)} as an extension, which starts and closes it around the test class or each test, or one
 * made by {@link #shared(int, Map)}, which every test class asking for the same size and settings shares.
 */
public final class InProcessCluster
        implements AutoCloseable, BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {
    /** Cluster secret used by all test nodes. */
    public static final String SECRET = "test-cluster-secret";
    /** The clusters of {@link #shared}, by size and settings. */
    private static final Map<String, InProcessCluster> SHARED = new ConcurrentHashMap<>();

    private final List<URI> urls = new ArrayList<>();
    private final List<Path> dataDirs = new ArrayList<>();
    private final List<ReplicaFaults> faults = new ArrayList<>();
    private final List<ServerFaults> serverFaults = new ArrayList<>();
    private final List<ConfigurableApplicationContext> nodes = new ArrayList<>();
    /** Settings of nodes added by {@link #add}, over the cluster's on every start. */
    private final Map<Integer, Map<String, String>> ownSettings = new HashMap<>();
    private Path root;
    private final Map<String, String> extraSettings;
    private final IntFunction<Clock> wallClocks;
    /** Of a cluster registered as an extension ({@link #of}): its temp dir once started, null before. */
    private Path ownDir;
    private boolean ofTestClass;
    private boolean restoredAfterEach;
    /** Made by {@link #shared}: started by the first test class, closed when the test JVM exits. */
    private boolean shared;

    private InProcessCluster(int size, Map<String, String> extraSettings, IntFunction<Clock> wallClocks) {
        this.extraSettings = extraSettings;
        this.wallClocks = wallClocks;
        for (int i = 0; i < size; i++) {
            faults.add(new ReplicaFaults());
            serverFaults.add(new ServerFaults());
            nodes.add(null);
        }
    }

    /** Gives the nodes free ports and data dirs under {@code root}, then starts each. */
    private void startAll(Path root) {
        this.root = root;
        List<Integer> ports;
        try {
            ports = NodeProcess.freePorts(nodes.size());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i < nodes.size(); i++) {
            String scheme = extraSettings.containsKey("dht.tls.bundle") ? "https" : "http";
            urls.add(URI.create(scheme + "://localhost:" + ports.get(i)));
            dataDirs.add(root.resolve("node-" + i));
        }
        for (int i = 0; i < nodes.size(); i++) {
            start(i);
        }
        awaitFormed();
    }

    /**
     * Waits until every running node's view log applied the first view (the founding nodes form the cluster once a
     * majority of them runs; a node may hold the view from a seed before its log does), has checked it and has
     * rebuilt (a founding member on an empty disk asks the others first): from then on each serves clients, and
     * stopping any one node of three leaves two voters that can elect a leader. Until a founding voter's log received an
     * entry, Ratis does not count its vote for a candidate with commits (docs/membership.md, Limits), so a test that
     * stopped the leader before that would find no leader.
     */
    private void awaitFormed() {
        Awaitility.await("the cluster of " + urls + " formed").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> nodes.stream().filter(node -> node != null && node.isActive())
                        .allMatch(node -> node.getBean(ViewLog.class).view() != null
                                && node.getBean(Membership.class).isMember()
                                && node.getBean(Membership.class).isViewConfirmed()
                                && !node.getBean(RebuildGate.class).isRebuilding()));
    }

    /** Starts {@code size} nodes with data dirs under {@code root}; {@code extraSettings} apply to every node. */
    public static InProcessCluster start(int size, Path root, Map<String, String> extraSettings) {
        return start(size, root, extraSettings, node -> null);
    }

    /**
     * Starts {@code size} nodes with data dirs under {@code root}; {@code extraSettings} apply to every node, and
     * node {@code i} runs on wall clock {@code wallClocks.apply(i)} (null: the system UTC clock), also when
     * started again.
     */
    public static InProcessCluster start(int size, Path root, Map<String, String> extraSettings,
                                         IntFunction<Clock> wallClocks) {
        InProcessCluster cluster = new InProcessCluster(size, extraSettings, wallClocks);
        cluster.startAll(root);
        return cluster;
    }

    /** Starts {@code size} nodes with default settings. */
    public static InProcessCluster start(int size, Path root) {
        return start(size, root, Map.of());
    }

    /**
     * A cluster of {@code size} nodes for a test to register as an extension ({@code @RegisterExtension}): started
     * in a temp dir of its own before the test class's tests (a static field) or before each test (an instance
     * field of a class with a test instance per method), and closed with its dir deleted after them.
     * {@code extraSettings} apply to every node.
     */
    public static InProcessCluster of(int size, Map<String, String> extraSettings) {
        return new InProcessCluster(size, extraSettings, node -> null);
    }

    /** {@link #of(int, Map)} with default settings. */
    public static InProcessCluster of(int size) {
        return of(size, Map.of());
    }

    /**
     * A cluster of {@code size} nodes with {@code extraSettings} for test classes to register as an extension on a
     * static field, shared by every class of the test JVM that asks for the same size and settings: started before
     * the first such class's tests, {@link #restoreAll restored} after each test, closed (its dir deleted) when the
     * test JVM exits. This saves the nodes' start-up per class, the slowest part of most cluster tests. A class on it
     * uses keys of its own, leaves every node running without faults (restoreAll does it after each test), and
     * asserts no totals other classes add to (a metric's count, all keys of a range): it compares a meter before and
     * after, or reads its own keys.
     */
    public static InProcessCluster shared(int size, Map<String, String> extraSettings) {
        return SHARED.computeIfAbsent(size + " " + new TreeMap<>(extraSettings), key -> {
            InProcessCluster cluster = new InProcessCluster(size, Map.copyOf(extraSettings), node -> null);
            cluster.shared = true;
            cluster.restoredAfterEach = true;
            return cluster;
        });
    }

    /** For a cluster of a whole test class: {@link #restoreAll} after each test. Returns this cluster. */
    public InProcessCluster restoredAfterEach() {
        restoredAfterEach = true;
        return this;
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) throws IOException {
        if (!shared) {
            startInOwnDir(true);
        } else if (ownDir == null) {
            startInOwnDir(true);
            // closed when the test JVM exits, not with JUnit's root store: surefire hands each test class to a
            // launcher of its own when it runs several test JVMs, and that store closes after the class
            Runtime.getRuntime().addShutdownHook(new Thread(this::closeInOwnDir, "shared-cluster-close"));
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        if (ownDir == null) {
            if (context.getTestInstanceLifecycle().orElse(Lifecycle.PER_METHOD) == Lifecycle.PER_CLASS) {
                // JUnit does not call an instance field's afterAll: the cluster would outlive the class
                throw new IllegalStateException("a cluster of a whole test class must be a static field");
            }
            startInOwnDir(false);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!ofTestClass) {
            closeInOwnDir();
        } else if (restoredAfterEach) {
            restoreAll();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (!shared) {
            closeInOwnDir();
        }
    }

    private void startInOwnDir(boolean ofTestClass) throws IOException {
        this.ofTestClass = ofTestClass;
        ownDir = Files.createTempDirectory("dht-cluster-");
        startAll(ownDir);
    }

    private void closeInOwnDir() {
        close();
        if (ownDir != null) {
            FileSystemUtils.deleteRecursively(ownDir.toFile());
        }
    }

    /** Starts node {@code i} (again) on its port and data dir. */
    public void start(int i) {
        start(i, Map.of());
    }

    /**
     * Starts node {@code i} (again) on its port and data dir, with {@code nodeSettings} over the cluster's (also
     * over the fixture's own, e.g. a shorter {@code dht.nodes}).
     */
    public void start(int i, Map<String, String> nodeSettings) {
        if (nodes.get(i) != null) {
            throw new IllegalStateException("node " + i + " is running");
        }
        // one argument per setting: Spring joins repeated command-line arguments with commas instead of overriding
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("server.port", String.valueOf(urls.get(i).getPort()));
        settings.put("dht.self", urls.get(i).toString());
        settings.put("dht.nodes", urls.stream().map(URI::toString).collect(Collectors.joining(",")));
        settings.put("dht.data-dir", dataDirs.get(i).toString());
        settings.put("dht.cluster-secret", SECRET);
        settings.put("spring.lifecycle.timeout-per-shutdown-phase", "2s");
        settings.putAll(extraSettings);
        settings.putAll(ownSettings.getOrDefault(i, Map.of()));
        settings.putAll(nodeSettings);
        List<String> args = new ArrayList<>();
        settings.forEach((key, value) -> args.add("--" + key + "=" + value));
        ReplicaFaults nodeFaults = faults.get(i);
        ServerFaults nodeServerFaults = serverFaults.get(i);
        Clock wallClock = wallClocks.apply(i);
        ConfigurableApplicationContext node = new SpringApplicationBuilder(DhtApplication.class)
                .initializers(context -> {
                    context.getBeanFactory().registerSingleton("replicaFaults", nodeFaults);
                    context.getBeanFactory().registerSingleton("serverFaults", nodeServerFaults);
                    if (wallClock != null) {
                        context.getBeanFactory().registerSingleton("nodeWallClock", wallClock);
                    }
                    context.getBeanFactory().addBeanPostProcessor(NettyQuietShutdown.INSTANCE);
                })
                .run(args.toArray(String[]::new));
        nodes.set(i, node);
    }

    /**
     * Adds a node that joins the running cluster by itself: its own port and data dir, {@code dht.nodes} naming only
     * node 0 as the seed (so it is not among them), and {@code settings} over the cluster's; started at once and on
     * every later {@link #start(int)} with the same settings. Returns its index.
     */
    public int add(Map<String, String> settings) {
        int i = nodes.size();
        try {
            urls.add(URI.create(urls.get(0).getScheme() + "://localhost:" + NodeProcess.freePorts(1).get(0)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        dataDirs.add(root.resolve("node-" + i));
        faults.add(new ReplicaFaults());
        serverFaults.add(new ServerFaults());
        nodes.add(null);
        Map<String, String> own = new LinkedHashMap<>();
        own.put("dht.nodes", urls.get(0).toString());
        own.putAll(settings);
        ownSettings.put(i, own);
        start(i);
        return i;
    }

    /** Stops node {@code i}, keeping its data dir. */
    public void stop(int i) {
        if (nodes.get(i) != null) {
            nodes.get(i).close();
            nodes.set(i, null);
        }
    }

    /** Starts every stopped node and clears all injected faults. */
    public void restoreAll() {
        for (int i = 0; i < nodes.size(); i++) {
            faults.get(i).clear();
            serverFaults.get(i).clear();
            if (nodes.get(i) == null) {
                start(i);
            }
        }
    }

    /** A client of node {@code i}. */
    public DhtClient client(int i) {
        return new DhtClient(urls.get(i));
    }

    /** Base URL of node {@code i}. */
    public URI url(int i) {
        return urls.get(i);
    }

    /** Data directory of node {@code i}. */
    public Path dataDir(int i) {
        return dataDirs.get(i);
    }

    /** Number of nodes. */
    public int size() {
        return nodes.size();
    }

    /** The fault injector on node {@code i}'s replica client. */
    public ReplicaFaults faults(int i) {
        return faults.get(i);
    }

    /** The fault injector on node {@code i}'s serving side (its handling of replica requests). */
    public ServerFaults serverFaults(int i) {
        return serverFaults.get(i);
    }

    /** A bean of running node {@code i}. */
    public <T> T bean(int i, Class<T> type) {
        return nodes.get(i).getBean(type);
    }

    /** What node {@code i} stores locally for {@code id} (reads its repository directly), or null. */
    public Record storedAt(int i, String id) {
        return bean(i, LocalStore.class).repository().get(id.getBytes(StandardCharsets.UTF_8));
    }

    /** Number of running nodes whose local store holds a live value for {@code id}. */
    public long copiesOf(String id) {
        long copies = 0;
        for (int i = 0; i < nodes.size(); i++) {
            Record record = nodes.get(i) == null ? null : storedAt(i, id);
            if (record != null && !record.isTombstone()) {
                copies++;
            }
        }
        return copies;
    }

    /**
     * Stops every running node, keeping the data dirs: side by side, as each node's stop waits about a second for
     * its Raft server's threads to end (Ratis's {@code RaftServerProxy.close}) and the nodes share nothing else.
     * Returns once every node stopped; an error of one is thrown after the others stopped.
     */
    @Override
    public void close() {
        List<CompletableFuture<Void>> stopping = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.get(i) != null) {
                int node = i;
                stopping.add(CompletableFuture.runAsync(() -> stop(node),
                        stop -> new Thread(stop, "stop-node-" + node).start()));
            }
        }
        try {
            CompletableFuture.allOf(stopping.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : e;
        }
    }
}
