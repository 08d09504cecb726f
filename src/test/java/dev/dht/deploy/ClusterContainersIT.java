package dev.dht.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Image;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.Volume;
import dev.dht.LocalCertificateAuthority;
import dev.dht.peer.InternalProtocol;
import dev.dht.testing.ClusterTls;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * The 3-node cluster of {@code k8s-tls/} (the cluster of {@code k8s/} with TLS: the environment of its StatefulSet
 * patch, the Secret {@code dht-tls} made here as {@code k8s/make-certs.sh} makes it) as containers: the image built
 * from the project's {@code Dockerfile} (on a local JRE base, {@code localhost/dht-base:test} unless {@code -Ddht.it.jre-image=...}), each node with the
 * environment the StatefulSet gives its pod and the network name its pod would have ({@code dht-0.dht}, ...).
 * The v0 API is reached on the API's port, probes and metrics on the management port, as in Kubernetes. Then one
 * node is stopped (2/3 works through the others, 3/3 times out) and restarted on its data (it serves it), cut off
 * from the network (2/3 works, 3/3 again once it reconnects), and recreated on an empty volume (503 until rebuilt,
 * then every key at 1/3 through it with the other two paused); all three are restarted one after another under a 2/3
 * load, as a rolling restart of the StatefulSet; a 4th container joins, serves every key and is
 * decommissioned; a backup taken in a pod restores through a pod's API port; the heap follows the memory limit.
 *
 * <p>Runs wherever a container engine is found (and fails if that engine cannot be used); skipped with one
 * message where there is none. Podman without a Docker engine: {@code .ci/run} shows the set-up.
 */
@ExtendWith(ClusterContainersIT.RequiresContainerEngine.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterContainersIT {
    private static final Path PROJECT = Path.of("").toAbsolutePath();
    private static final String JRE_IMAGE = System.getProperty("dht.it.jre-image", "localhost/dht-base:test");
    /** On every container, network and image of this test, so that {@code .ci/run} can remove what a crashed run left. */
    private static final Map<String, String> LABELS = Map.of("dev.dht.it", "true");
    /**
     * Until a container is ready: it starts, and the cluster forms once all three run and hold no view, all three
     * JVMs starting at once on the build machine's cores.
     */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
    private static final Duration HEAL_TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicInteger KEYS = new AtomicInteger();

    private static final KubernetesManifests K8S = KubernetesManifests.readKustomization(PROJECT.resolve("k8s"));
    private static final List<GenericContainer<?>> NODES = new ArrayList<>();
    /** The TLS overlay of {@code k8s/}: its StatefulSet patch sets the nodes' TLS environment and HTTPS probes. */
    private static final Path TLS_PATCH = PROJECT.resolve("k8s-tls/statefulset-tls.yaml");
    /** Where the overlay mounts the Secret {@code dht-tls}. */
    private static final String TLS_MOUNT = "/etc/dht/tls/";
    /**
     * The backup location every node writes to ({@code DHT_BACKUP_LOCATION}, k8s/README's "a volume every pod
     * mounts"): one directory of this machine mounted into every container.
     */
    private static final String BACKUP_MOUNT = "/backups";
    /** Trusts the cluster's CA, presents no certificate: the actuator's writes still need the secret. */
    private static HttpClient http;
    private static Network network;
    private static DockerClient docker;
    private static int apiPort;
    private static int managementPort;
    private static String clusterSecret;
    private static String readinessPath;
    private static long memoryLimit;
    private static String nodeImage;
    private static Path tlsDir;
    private static LocalCertificateAuthority certificateAuthority;
    private static List<EnvVar> tlsPatch;
    private static Path backupDir;

    @BeforeAll
    static void startCluster() throws Exception {
        try {
            docker = DockerClientFactory.instance().client();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("a container engine is here (" + RequiresContainerEngine.engineHint().orElse("?")
                    + ") but Testcontainers cannot use it (its log above says why). Podman without Docker: "
                    + "eval \"$(.ci/setup-podman.sh)\" exports what Testcontainers needs, as .ci/run does", e);
        }
        try {
            docker.inspectImageCmd(JRE_IMAGE).exec();
        } catch (NotFoundException e) {
            throw new IllegalStateException("the JRE base image " + JRE_IMAGE + " is missing: build it with "
                    + ".ci/build-jre-image.sh " + JRE_IMAGE + " (no registry needed), or run with -Ddht.it.jre-image=IMAGE", e);
        }
        Path jar = PROJECT.resolve("target/dht.jar");
        assertThat(jar).as("target/dht.jar (the package phase builds it before this test)").isRegularFile();
        String image = new ImageFromDockerfile()
                .withFileFromPath("Dockerfile", PROJECT.resolve("Dockerfile"))
                .withFileFromPath("target/dht.jar", jar)
                .withFileFromPath("bin/dht", PROJECT.resolve("bin/dht"))
                .withBuildArg("JRE_IMAGE", JRE_IMAGE)
                .withBuildImageCmdModifier(build -> build.withLabels(LABELS))
                .get();

        StatefulSet statefulSet = K8S.one(StatefulSet.class);
        Container pod = K8S.nodeContainer();
        apiPort = K8S.portSetBy("SERVER_PORT").getContainerPort();
        managementPort = K8S.portNamed(pod.getReadinessProbe().getHttpGet().getPort().getStrVal()).getContainerPort();
        readinessPath = pod.getReadinessProbe().getHttpGet().getPath();
        memoryLimit = Quantity.getAmountInBytes(pod.getResources().getLimits().get("memory")).longValueExact();
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        clusterSecret = HexFormat.of().formatHex(secret);
        network = Network.builder().createNetworkCmdModifier(create -> create.withLabels(LABELS)).build();
        // the Secret dht-tls as k8s/make-certs.sh makes it: a CA and one certificate per pod (and, for this test's
        // client on the host, for the host's names too)
        Path tls = Files.createTempDirectory("dht-it-tls-");
        LocalCertificateAuthority authority = LocalCertificateAuthority.create("dht IT CA", Duration.ofDays(1));
        authority.writeCertificate(tls.resolve("ca.crt"));
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
                .sslContext(ClusterTls.context(authority.certificate(), null)).build();
        List<EnvVar> tlsEnvironment = KubernetesManifests.read(TLS_PATCH, StatefulSet.class).getSpec().getTemplate()
                .getSpec().getContainers().get(0).getEnv();
        nodeImage = image;
        tlsDir = tls;
        backupDir = Files.createTempDirectory("dht-it-backups-");
        // the image's user (10001) writes there
        Files.setPosixFilePermissions(backupDir, PosixFilePermissions.fromString("rwxrwxrwx"));

        certificateAuthority = authority;
        tlsPatch = tlsEnvironment;
        for (int ordinal = 0; ordinal < statefulSet.getSpec().getReplicas(); ordinal++) {
            NODES.add(newNode(ordinal));
        }
        try (Stream<Path> files = Files.list(tls)) {
            for (Path file : files.toList()) {
                // the Secret volume's files, readable by the image's user (the overlay's defaultMode is for its group)
                NODES.forEach(node -> node.withCopyFileToContainer(MountableFile.forHostPath(file, 0644),
                        TLS_MOUNT + file.getFileName()));
            }
        }
        Startables.deepStart(NODES).join();
    }

    /**
     * The container of pod {@code dht-ORDINAL}, as the StatefulSet and the TLS overlay make it, with its own
     * certificate in {@link #tlsDir} (the other files are copied by the caller); not started.
     */
    private static GenericContainer<?> newNode(int ordinal) throws IOException {
        StatefulSet statefulSet = K8S.one(StatefulSet.class);
        String podName = statefulSet.getMetadata().getName() + "-" + ordinal;
        String name = podName + "." + statefulSet.getSpec().getServiceName();
        String dockerHost = DockerClientFactory.instance().dockerHostIpAddress();
        certificateAuthority.issue(List.of(name, "localhost", "127.0.0.1", dockerHost), Duration.ofDays(1))
                .writeTo(tlsDir.resolve(podName + ".crt"), tlsDir.resolve(podName + ".key"));
        Map<String, String> environment = new LinkedHashMap<>(K8S.podEnvironment(ordinal, reference -> clusterSecret));
        for (EnvVar variable : tlsPatch) {
            environment.put(variable.getName(), variable.getValue().replace("$(POD_NAME)", podName));
        }
        environment.put("DHT_BACKUP_LOCATION", "file:" + BACKUP_MOUNT);
        return new GenericContainer<>(DockerImageName.parse(nodeImage))
                .withImagePullPolicy(imageName -> false)
                .withNetwork(network)
                .withNetworkAliases(name)
                .withEnv(environment)
                .withLabels(LABELS)
                .withExposedPorts(apiPort, managementPort)
                .withCreateContainerCmdModifier(create -> create.getHostConfig().withMemory(memoryLimit)
                        .withBinds(new Bind(backupDir.toString(), new Volume(BACKUP_MOUNT))))
                .waitingFor(Wait.forHttp(readinessPath).forPort(managementPort).usingTls().allowInsecure()
                        .forStatusCode(200).withStartupTimeout(START_TIMEOUT));
    }

    @AfterAll
    static void stopCluster() throws IOException {
        Path logs = Files.createDirectories(PROJECT.resolve("target/failsafe-reports"));
        for (int ordinal = 0; ordinal < NODES.size(); ordinal++) {
            GenericContainer<?> node = NODES.get(ordinal);
            if (node.getContainerId() != null) {
                Files.writeString(logs.resolve("ClusterContainersIT-dht-" + ordinal + ".log"), node.getLogs());
            }
            node.stop();   // removes the container and its volume
        }
        if (network != null) {
            network.close();
        }
        if (docker != null) {
            removeImagesBuiltHere();
        }
        if (backupDir != null) {
            try (Stream<Path> files = Files.walk(backupDir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /** The node image and its build stages (Ryuk, which would remove them, does not run everywhere): newest first. */
    private static void removeImagesBuiltHere() {
        List<Image> built = new ArrayList<>(docker.listImagesCmd().withShowAll(true)
                .withLabelFilter(Map.of(DockerClientFactory.TESTCONTAINERS_SESSION_ID_LABEL, DockerClientFactory.SESSION_ID)).exec());
        built.sort(Comparator.comparing(Image::getCreated).reversed());
        for (Image image : built) {
            try {
                docker.removeImageCmd(image.getId()).withForce(true).exec();
            } catch (NotFoundException alreadyRemovedWithItsChild) {
                // an untagged parent goes with the image built on it
            }
        }
    }

    /** Every test starts from a whole cluster: all nodes answer, and a 3/3 write and read work. */
    @BeforeEach
    void clusterIsWhole() {
        awaitWholeCluster();
    }

    @Test
    void twoOfThreeWriteThenReadWorksThroughEveryNode() {
        for (int writer = 0; writer < NODES.size(); writer++) {
            String key = newKey("via-dht-" + writer);
            assertThat(put(writer, key, "value of " + key, "2/3").statusCode()).as("PUT 2/3 via dht-%d", writer).isEqualTo(201);
            for (int reader = 0; reader < NODES.size(); reader++) {
                HttpResponse<String> read = get(reader, key, "2/3");
                assertThat(read.statusCode()).as("GET 2/3 via dht-%d of a key written via dht-%d", reader, writer).isEqualTo(200);
                assertThat(read.body()).isEqualTo("value of " + key);
            }
        }
    }

    @Test
    void heapIsSizedFromTheContainersMemoryLimit() throws IOException {
        Matcher option = Pattern.compile("-XX:MaxRAMPercentage=(\\d+)").matcher(K8S.podEnvironment(0, any -> "").get("JAVA_TOOL_OPTIONS"));
        assertThat(option.find()).isTrue();
        double expected = memoryLimit * Double.parseDouble(option.group(1)) / 100;

        // where Prometheus scrapes a pod: the port and path of its annotations
        Map<String, String> pod = K8S.one(StatefulSet.class).getSpec().getTemplate().getMetadata().getAnnotations();
        int scrapePort = Integer.parseInt(pod.get("prometheus.io/port"));
        HttpResponse<String> scrape = send(HttpRequest.newBuilder(uri(0, scrapePort, pod.get("prometheus.io/path"))));

        assertThat(scrape.statusCode()).isEqualTo(200);
        // the heap's pools add up to a little less than the maximum heap (a survivor space is not counted); a pool
        // without a maximum reports -1
        double heapMax = scrape.body().lines()
                .filter(line -> line.startsWith("jvm_memory_max_bytes{") && line.contains("area=\"heap\""))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .filter(bytes -> bytes > 0)
                .sum();
        assertThat(heapMax).as("max heap of dht-0, with a %d-byte memory limit", memoryLimit)
                .isBetween(0.9 * expected, expected);
    }

    @Test
    void operationsAreOnTheManagementPortOnlyAndRepairNeedsTheClusterSecret() {
        assertThat(send(HttpRequest.newBuilder(uri(0, apiPort, readinessPath))).statusCode())
                .as("GET %s on the API's port", readinessPath).isEqualTo(400);
        assertThat(send(HttpRequest.newBuilder(uri(0, managementPort, "/v0/status"))).statusCode())
                .as("GET /v0/status on the management port").isEqualTo(400);
        assertThat(send(repair(0)).statusCode()).as("POST /actuator/repair without the secret").isEqualTo(403);
        assertThat(send(repair(0).header(InternalProtocol.SECRET_HEADER, "wrong")).statusCode())
                .as("POST /actuator/repair with a wrong secret").isEqualTo(403);
        HttpResponse<String> repaired = send(repair(0).header(InternalProtocol.SECRET_HEADER, clusterSecret));
        assertThat(repaired.statusCode()).as("POST /actuator/repair with the secret: %s", repaired.body())
                .isEqualTo(200);
        assertThat(repaired.body()).contains("dht-1.dht:8080", "dht-2.dht:8080").doesNotContain("\"error\":\"");
    }

    /**
     * {@code kubectl exec dht-0 -- dht status}: the command line on the image's PATH asks its own node's management
     * port over HTTPS (DHT_HOST and DHT_CACERT of the TLS overlay) and lists every member up.
     */
    @Test
    void theCommandLineInAPodShowsEveryMemberUp() throws Exception {
        ExecResult status = NODES.get(0).execInContainer("dht", "status");

        assertThat(status.getExitCode()).as("dht status: %s %s", status.getStdout(), status.getStderr()).isZero();
        for (int i = 0; i < NODES.size(); i++) {
            assertThat(status.getStdout()).containsPattern("(?m)^UP +NORMAL +https://dht-" + i + "\\.dht:8080 ");
        }
        ExecResult unknown = NODES.get(0).execInContainer("dht", "stauts");
        assertThat(unknown.getExitCode()).as("an unknown command: %s", unknown.getStderr()).isEqualTo(2);
    }

    /**
     * k8s/README's backup and restore: {@code kubectl exec dht-0 -- dht backup start --wait} backs up the cluster,
     * then {@code dht restore --from ... --into https://dht-0.dht:8080} restores it through a pod's API port,
     * reading the cluster's view there with the secret (the StatefulSet serves the actuator on the management port
     * only). The restore runs in the node image with its user and working directory, as {@code kubectl run ... --
     * restore} runs it, here in dht-1's container (small: it fits beside the node).
     */
    @Test
    void aBackupTakenInAPodRestoresThroughAPodsApiPortAsK8sReadmeSays() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String key = newKey("backup");
            assertThat(put(i % NODES.size(), key, "value of " + key, "2/3").statusCode()).isEqualTo(201);
            keys.add(key);
        }

        ExecResult backup = NODES.get(0).execInContainer("dht", "backup", "start", "--wait");

        assertThat(backup.getExitCode()).as("dht backup start --wait: %s %s", backup.getStdout(), backup.getStderr())
                .isZero();
        String[] lines = backup.getStdout().strip().split("\\R");
        String id = lines[lines.length - 1].strip();
        StatefulSet statefulSet = K8S.one(StatefulSet.class);
        String firstPod = "https://" + statefulSet.getMetadata().getName() + "-0." + statefulSet.getSpec().getServiceName()
                + ":" + apiPort;
        ExecResult restore = NODES.get(1).execInContainer("dht", "restore", "--from", "file:" + BACKUP_MOUNT,
                "--backup", id, "--into", firstPod);

        String output = restore.getStdout() + restore.getStderr();
        assertThat(restore.getExitCode()).as("dht restore: %s", output).isZero();
        Matcher restored = Pattern.compile("restored backup " + Pattern.quote(id) + ": (\\d+) records").matcher(output);
        assertThat(restored.find()).as("restore's output: %s", output).isTrue();
        assertThat(Long.parseLong(restored.group(1))).as("records restored").isGreaterThanOrEqualTo(keys.size());
        for (String key : keys) {
            assertThat(get(2, key, "3/3").body()).isEqualTo("value of " + key);
        }
    }

    @Test
    void withOneNodeStoppedTwoOfThreeWorksAndThreeOfThreeTimesOutThenTheRestartedNodeServesItsData() {
        String before = newKey("stop-before");
        String during = newKey("stop-during");
        assertThat(put(0, before, "v-before", "3/3").statusCode()).as("PUT 3/3 before the stop").isEqualTo(201);

        docker.stopContainerCmd(NODES.get(2).getContainerId()).withTimeout(30).exec();   // SIGTERM, graceful
        try {
            for (int node = 0; node < 2; node++) {
                int through = node;
                HttpResponse<String> written = retriedOnceOnTimeout(() -> put(through, during + through, "v-during", "2/3"));
                assertThat(written.statusCode()).as("PUT 2/3 via dht-%d: %s", node, written.body()).isEqualTo(201);
                HttpResponse<String> read = retriedOnceOnTimeout(() -> get(through, before, "2/3"));
                assertThat(read.statusCode()).as("GET 2/3 via dht-%d: %s", node, read.body()).isEqualTo(200);
                assertThat(get(node, before, "3/3").statusCode()).as("GET 3/3 via dht-%d, dht-2 stopped", node).isEqualTo(504);
                assertThat(put(node, during + "-all-" + node, "v", "3/3").statusCode()).as("PUT 3/3 via dht-%d, dht-2 stopped", node).isEqualTo(504);
            }
        } finally {
            docker.startContainerCmd(NODES.get(2).getContainerId()).exec();   // the same container: same volume
        }
        awaitReady(2);

        // dht-2's own store, read without coordination: the record it had before the stop is still there.
        HttpResponse<String> local = send(HttpRequest.newBuilder(uri(2, apiPort, "/v0/entities?start=" + encode(before)
                + "&end=" + encode(before + "0"))));
        assertThat(local.statusCode()).isEqualTo(200);
        assertThat(local.body()).as("dht-2's local records from %s", before).isEqualTo(before + "\nv-before");
        for (int node = 0; node < 2; node++) {
            HttpResponse<String> missed = get(2, during + node, "2/3");
            assertThat(missed.statusCode()).as("GET 2/3 via dht-2 of a key written while it was stopped").isEqualTo(200);
            assertThat(missed.body()).isEqualTo("v-during");
        }
        awaitWholeCluster();
    }

    /**
     * {@code request()}'s answer; a 504 is printed with its body and the request sent once more a second later, as a
     * client retries a timeout. On the shared 2-core build machine a running replica now and then misses the 1-s
     * {@code dht.replica-timeout} just after a container stops (once in more than 20 CI runs: a PUT at 2/3 through
     * dht-1 right after dht-2's stop; see {@link #aRollingRestartUnderTwoOfThreeLoadAnswersOnlySuccessNotFoundOrRetryAfterAndLosesNothing}
     * for how often under load); two timeouts in a row fail the test.
     */
    private static HttpResponse<String> retriedOnceOnTimeout(Supplier<HttpResponse<String>> request) {
        HttpResponse<String> first = request.get();
        if (first.statusCode() != 504) {
            return first;
        }
        System.out.printf("%s %s answered 504 (%s); sent again in 1 s%n", first.request().method(), first.request().uri(),
                first.body().strip());
        try {
            Thread.sleep(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return request.get();
    }

    /**
     * {@code kubectl rollout restart statefulset/dht}, as containers, under a steady 2/3 load through the nodes the
     * Service {@code dht-client} would route to ({@link ServiceRoutedLoad}): highest ordinal first, each node leaves
     * the load's rotation, gets SIGTERM with the pod's grace period, starts again on its volume and, once ready and
     * answering {@code /v0/status} 200, rejoins the rotation before the next one stops. Every answer is 2xx, 404 or
     * 503 with {@code Retry-After}, or 504 (no 500, none missing), no read is older than an acknowledged write, each
     * node stops by itself within the grace period, and afterwards every key reads back at 2/3 what was last
     * acknowledged. The load's status counts and latency are printed, and the first 504s with their times: on the
     * shared 2-core build machine some requests get 504 while a restarted JVM starts (3 to 286 of 4 500-6 400, more
     * with the machine's load), a running replica not answering within {@code dht.replica-timeout}
     * ({@code gatling/results/2026-11-29-2340-rolling-restart-containers.md}), so "no 504" is not asserted here.
     *
     * <p>Runs last (the others keep their order): run before the partition case, it left that case's 3/3 short of
     * its 30 s after the reconnect twice (a CI run and one of four whole-class runs here); cause not found.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aRollingRestartUnderTwoOfThreeLoadAnswersOnlySuccessNotFoundOrRetryAfterAndLosesNothing() throws Exception {
        int grace = K8S.one(StatefulSet.class).getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()
                .intValue();
        ServiceRoutedLoad load = new ServiceRoutedLoad(http, apiBases(), newKey("rolling"));
        List<String> restarts = new ArrayList<>();
        load.start();
        try {
            for (int ordinal = NODES.size() - 1; ordinal >= 0; ordinal--) {
                String id = NODES.get(ordinal).getContainerId();
                load.leaveRotation(ordinal);
                long stopping = System.nanoTime();
                docker.stopContainerCmd(id).withTimeout(grace).exec();   // SIGTERM, SIGKILL after the grace period
                long stopped = System.nanoTime();
                assertThat(docker.inspectContainerCmd(id).exec().getState().getExitCodeLong())
                        .as("dht-%d's exit code (143: it ended by itself on SIGTERM; 137: killed after %d s)", ordinal,
                                grace).isEqualTo(143L);
                docker.startContainerCmd(id).exec();   // the same container: the same volume
                int node = ordinal;
                awaitReady(node);
                await("dht-" + node + " answers /v0/status 200").atMost(START_TIMEOUT)
                        .pollInterval(Duration.ofMillis(200)).until(() -> statusOrNone(node, apiPort, "/v0/status") == 200);
                load.rejoinRotation(ordinal, uri(ordinal, apiPort, ""));
                restarts.add(String.format("dht-%d stopped in %.1f s and back in %.1f s", ordinal,
                        (stopped - stopping) / 1e9, (System.nanoTime() - stopped) / 1e9));
            }
        } finally {
            load.stop();
            for (GenericContainer<?> node : NODES) {   // the next test needs the whole cluster
                if (!Boolean.TRUE.equals(docker.inspectContainerCmd(node.getContainerId()).exec().getState().getRunning())) {
                    docker.startContainerCmd(node.getContainerId()).exec();
                }
            }
        }
        System.out.printf("rolling restart under 2/3 load (%s): %s%n", String.join(", ", restarts), load.summary());
        load.timeouts().forEach(timeout -> System.out.println("  504: " + timeout));
        load.assertNoFailures();
        load.assertEveryAcknowledgedKeyReadsBack(apiBases());
        awaitWholeCluster();
    }

    /** Each node's API as reached from this machine, its base URI (https://host:port). */
    private static List<URI> apiBases() {
        return Stream.iterate(0, node -> node < NODES.size(), node -> node + 1).map(node -> uri(node, apiPort, ""))
                .toList();
    }

    @Test
    void aPartitionedNodeLeavesTwoOfThreeWorkingAndTheClusterAnswersThreeOfThreeAfterItReconnects() {
        String key = newKey("partition");
        String alias = NODES.get(2).getNetworkAliases().stream().filter(name -> name.startsWith("dht-")).findFirst().orElseThrow();

        docker.disconnectFromNetworkCmd().withNetworkId(network.getId()).withContainerId(NODES.get(2).getContainerId()).exec();
        try {
            for (int node = 0; node < 2; node++) {
                assertThat(put(node, key + node, "v-partition", "2/3").statusCode()).as("PUT 2/3 via dht-%d", node).isEqualTo(201);
                assertThat(get(node, key + node, "2/3").body()).as("GET 2/3 via dht-%d", node).isEqualTo("v-partition");
                assertThat(get(node, key + node, "3/3").statusCode()).as("GET 3/3 via dht-%d, dht-2 cut off", node).isEqualTo(504);
            }
        } finally {
            docker.connectToNetworkCmd().withNetworkId(network.getId()).withContainerId(NODES.get(2).getContainerId())
                    .withContainerNetwork(new ContainerNetwork().withAliases(alias)).exec();
        }

        // Peers see dht-2's new address within their DNS cache time (1 s in the image).
        await("3/3 through every node after the reconnect").atMost(HEAL_TIMEOUT).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .until(() -> Stream.of(0, 1, 2).allMatch(node -> get(node, key + 0, "3/3").statusCode() == 200
                        && put(node, key + "-healed-" + node, "v", "3/3").statusCode() == 201));
        assertThat(get(2, key + 1, "3/3").body()).isEqualTo("v-partition");
    }

    /**
     * {@code kubectl scale statefulset dht --replicas=4}, as containers: dht-3, not among the seeds, joins the running
     * cluster by itself, becomes ready as a NORMAL member and serves every key; then it is decommissioned (as
     * k8s/scale-down.sh does) and the three others hold everything again. The cluster ends as it began.
     */
    @Test
    void aFourthContainerJoinsTheRunningClusterAndIsDecommissionedAgain() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String key = newKey("join");
            assertThat(put(i % 3, key, "v-" + key, "2/3").statusCode()).isEqualTo(201);
            keys.add(key);
        }
        GenericContainer<?> joiner = newNode(3);
        for (String file : List.of("ca.crt", "dht-3.crt", "dht-3.key")) {
            joiner.withCopyFileToContainer(MountableFile.forHostPath(tlsDir.resolve(file), 0644), TLS_MOUNT + file);
        }
        try {
            joiner.start(); // waits until it is ready: a NORMAL member
            assertThat(send(HttpRequest.newBuilder(uri(joiner, managementPort, "/actuator/cluster"))).body())
                    .contains("dht-3.dht:8080").doesNotContain("JOINING").contains("\"change\":null");
            for (String key : keys) {
                HttpResponse<String> read = send(HttpRequest.newBuilder(uri(joiner, apiPort,
                        "/v0/entity?id=" + encode(key) + "&replicas=2/3")));
                assertThat(read.statusCode()).as("GET 2/3 of %s through dht-3", key).isEqualTo(200);
                assertThat(read.body()).isEqualTo("v-" + key);
            }

            HttpResponse<String> leave = send(HttpRequest.newBuilder(uri(joiner, managementPort,
                            "/actuator/cluster/decommission")).header(InternalProtocol.SECRET_HEADER, clusterSecret)
                    .POST(HttpRequest.BodyPublishers.noBody()));
            assertThat(leave.statusCode()).as("decommission: %s", leave.body()).isEqualTo(202);
            await("dht-3 left").atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> {
                        String view = send(HttpRequest.newBuilder(uri(0, managementPort, "/actuator/cluster"))).body();
                        return !view.contains("dht-3.dht") && view.contains("\"change\":null");
                    });
            assertThat(send(HttpRequest.newBuilder(uri(joiner, managementPort, readinessPath))).statusCode())
                    .as("a node that left is never ready").isEqualTo(503);
            for (String key : keys) {
                assertThat(get(1, key, "2/3").body()).as("GET 2/3 of %s after dht-3 left", key).isEqualTo("v-" + key);
            }
        } finally {
            Files.writeString(Files.createDirectories(PROJECT.resolve("target/failsafe-reports"))
                    .resolve("ClusterContainersIT-dht-3.log"), joiner.getContainerId() == null ? "" : joiner.getLogs());
            joiner.stop();
        }
        awaitWholeCluster();
    }

    /**
     * {@code kubectl delete pvc data-dht-1 && kubectl delete pod dht-1}, as containers: dht-1 is removed with its
     * volume and created again, with the same name and certificate, on an empty volume. A member that lost its data,
     * it answers {@code /v0/status} 503 until it has rebuilt its store from the other two, then 200 and is ready;
     * with the other two paused, every key written before (at 2/3 or the default) reads through it at 1/3, from its
     * own store.
     */
    @Test
    void aContainerBackOnAnEmptyVolumeRebuildsBeforeItIsReadyThenHoldsEveryKey() throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String key = newKey("lost-volume");
            String replicas = i % 2 == 0 ? "2/3" : null;   // null: the default, a majority of the replicas
            int through = i % 2 == 0 ? 0 : 2;
            assertThat(send(HttpRequest.newBuilder(entity(through, key, replicas))
                    .PUT(HttpRequest.BodyPublishers.ofString("v-" + key))).statusCode())
                    .as("PUT %s of %s via dht-%d", replicas, key, through).isEqualTo(201);
            keys.add(key);
        }

        GenericContainer<?> lost = NODES.get(1);
        Files.writeString(Files.createDirectories(PROJECT.resolve("target/failsafe-reports"))
                .resolve("ClusterContainersIT-dht-1-before-its-volume-was-lost.log"), lost.getLogs());
        lost.stop();   // removes the container and its volume: the pod and its PersistentVolumeClaim gone
        GenericContainer<?> replaced = newNode(1).waitingFor(new StartedOnly());
        for (String file : List.of("ca.crt", "dht-1.crt", "dht-1.key")) {
            replaced.withCopyFileToContainer(MountableFile.forHostPath(tlsDir.resolve(file), 0644), TLS_MOUNT + file);
        }
        NODES.set(1, replaced);
        replaced.start();

        List<Integer> statuses = new ArrayList<>();
        await("dht-1 back on an empty volume serves").atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    int status = statusOrNone(1, apiPort, "/v0/status");
                    if (status != -1 && (statuses.isEmpty() || statuses.get(statuses.size() - 1) != status)) {
                        statuses.add(status);
                    }
                    return status == 200;
                });
        assertThat(statuses).as("/v0/status of dht-1 back on an empty volume, in turn").startsWith(503)
                .endsWith(200).containsOnly(503, 200);
        assertThat(replaced.getLogs()).as("dht-1's output").contains("rebuild complete");
        assertThat(statusOrNone(1, managementPort, readinessPath)).as("dht-1's readiness once rebuilt")
                .isEqualTo(200);

        List<String> others = List.of(NODES.get(0).getContainerId(), NODES.get(2).getContainerId());
        others.forEach(id -> docker.pauseContainerCmd(id).exec());
        try {
            for (String key : keys) {
                HttpResponse<String> read = get(1, key, "1/3");
                assertThat(read.statusCode()).as("GET 1/3 of %s via dht-1, dht-0 and dht-2 paused", key)
                        .isEqualTo(200);
                assertThat(read.body()).isEqualTo("v-" + key);
            }
        } finally {
            others.forEach(id -> docker.unpauseContainerCmd(id).exec());
        }
        System.out.printf("dht-1 back on an empty volume: /v0/status %s, then every key at 1/3 with its peers"
                + " paused%n", statuses);
        awaitWholeCluster();
    }

    private static void awaitWholeCluster() {
        for (int node = 0; node < NODES.size(); node++) {
            awaitReady(node);
        }
        String key = newKey("whole");
        await("a 3/3 write and read through every node").atMost(HEAL_TIMEOUT).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .until(() -> Stream.of(0, 1, 2).allMatch(node -> put(node, key, "v", "3/3").statusCode() == 201
                        && get(node, key, "3/3").statusCode() == 200));
    }

    private static void awaitReady(int node) {
        await("dht-" + node + " ready").atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> send(HttpRequest.newBuilder(uri(node, managementPort, readinessPath))).statusCode()
                        == 200);
    }

    /** The status {@code node} answers on {@code port} to {@code GET path}, or -1 while it does not answer. */
    private static int statusOrNone(int node, int port, String path) {
        try {
            return http.send(HttpRequest.newBuilder(uri(node, port, path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String newKey(String purpose) {
        return "it-" + purpose + "-" + KEYS.incrementAndGet() + "-" + System.nanoTime();
    }

    private static HttpResponse<String> put(int node, String key, String value, String replicas) {
        return send(HttpRequest.newBuilder(entity(node, key, replicas)).PUT(HttpRequest.BodyPublishers.ofString(value)));
    }

    private static HttpResponse<String> get(int node, String key, String replicas) {
        return send(HttpRequest.newBuilder(entity(node, key, replicas)));
    }

    /** {@code /v0/entity} of {@code key} on {@code node} at {@code replicas}, or at the default if null. */
    private static URI entity(int node, String key, String replicas) {
        return uri(node, apiPort, "/v0/entity?id=" + encode(key) + (replicas == null ? "" : "&replicas=" + replicas));
    }

    private static HttpRequest.Builder repair(int node) {
        return HttpRequest.newBuilder(uri(node, managementPort, "/actuator/repair")).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody());
    }

    /**
     * The node's {@code port} as reached from this machine, asked of the engine each time: a restarted container may
     * get another host port.
     */
    private static URI uri(int node, int port, String pathAndQuery) {
        return uri(NODES.get(node), port, pathAndQuery);
    }

    private static URI uri(GenericContainer<?> node, int port, String pathAndQuery) {
        Ports.Binding[] bindings = docker.inspectContainerCmd(node.getContainerId()).exec()
                .getNetworkSettings().getPorts().getBindings().get(ExposedPort.tcp(port));
        return URI.create("https://" + node.getHost() + ":" + bindings[0].getHostPortSpec() + pathAndQuery);
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        HttpRequest built = request.build();
        if (built.timeout().isEmpty()) {
            built = request.timeout(Duration.ofSeconds(10)).build();
        }
        try {
            return http.send(built, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(built.method() + " " + built.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(built.method() + " " + built.uri() + ": interrupted", e);
        }
    }

    /**
     * Waits for nothing more than the container's start, for a test that watches the node come up itself (a wait for
     * readiness would hide the answers before it).
     */
    private static final class StartedOnly extends AbstractWaitStrategy {
        @Override
        protected void waitUntilReady() {
            // started is all this waits for
        }
    }

    /**
     * Skips the class, with one message, only where no container engine can be found at all: no DOCKER_HOST, no
     * Docker or Podman socket in the usual places, no docker or podman program, and not on CI. Anywhere else the
     * tests run, and an engine that Testcontainers cannot use fails them.
     */
    static final class RequiresContainerEngine implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Optional<String> engine = engineHint();
            return engine.map(hint -> ConditionEvaluationResult.enabled("container engine: " + hint))
                    .orElseGet(() -> ConditionEvaluationResult.disabled("no container engine found (no DOCKER_HOST, no "
                            + "Docker or Podman socket, no docker or podman on PATH): the 3-node container tests did not run. "
                            + "To run them: start Docker, or set up Podman as .ci/run does"));
        }

        static Optional<String> engineHint() {
            Map<String, String> env = System.getenv();
            if ("true".equals(env.get("CI"))) {
                return Optional.of("CI=true, where the container tests must run");
            }
            if (env.containsKey("DOCKER_HOST")) {
                return Optional.of("DOCKER_HOST=" + env.get("DOCKER_HOST"));
            }
            String runtimeDir = env.getOrDefault("XDG_RUNTIME_DIR", "/run/user/" + env.getOrDefault("UID", "0"));
            Optional<String> socket = Stream.of("/var/run/docker.sock", "/run/podman/podman.sock",
                            runtimeDir + "/podman/podman.sock", System.getProperty("user.home") + "/.docker/run/docker.sock")
                    .filter(path -> Files.exists(Path.of(path))).findFirst();
            if (socket.isPresent()) {
                return socket.map(path -> "socket " + path);
            }
            return Stream.of(env.getOrDefault("PATH", "").split(File.pathSeparator))
                    .filter(dir -> !dir.isEmpty())
                    .flatMap(dir -> Stream.of(Path.of(dir, "docker"), Path.of(dir, "podman")))
                    .filter(Files::isExecutable).findFirst().map(program -> "program " + program);
        }
    }
}
