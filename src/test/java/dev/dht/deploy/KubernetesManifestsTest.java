package dev.dht.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.DhtApplication;
import dev.dht.config.AdmissionProperties;
import dev.dht.config.DhtProperties;
import dev.dht.config.ReplicaClientProperties;
import dev.dht.config.TlsProperties;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.BoundPropertiesTrackingBindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The manifests of {@code k8s/} (and the settings in {@code config/}) describe a cluster the node application
 * accepts: every file read strictly into Kubernetes' object model, then the invariants a working 3-node
 * deployment needs, checked against the application itself where it has the answer (settings it binds, health
 * paths it serves, its shutdown timeout). An unknown or misspelt field fails. Checked: each {@code DHT_*} variable
 * binds to a setting; a node configured as pod {@code dht-0} answers 200 on every probe path and on the Prometheus
 * annotations' path on the management port, and no actuator on the API's; {@code SERVER_PORT} and
 * {@code MANAGEMENT_SERVER_PORT} equal the container ports and the image's defaults; probes are on the management
 * port, {@code dht-client} has the API's port only; the data dir is on the claim; the grace period covers the
 * preStop sleep plus the application's shutdown timeout; the secret is referenced and not in the repository. Where
 * {@code kubectl} is on the PATH, {@code kubectl kustomize k8s/} is compared with the files; otherwise that test is
 * skipped and says so.
 */
class KubernetesManifestsTest {
    private static final Path PROJECT = Path.of("").toAbsolutePath();
    private static KubernetesManifests k8s;
    private static final Function<SecretKeySelector, String> TEST_SECRET =
            reference -> "not-a-real-secret-" + reference.getName() + "-" + reference.getKey();

    /** Reads k8s/ once; a mistake in a file fails here, with the file and field named, before any check. */
    @BeforeAll
    static void readK8s() {
        k8s = KubernetesManifests.readKustomization(PROJECT.resolve("k8s"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("manifestsWithOneMistake")
    void aMistakeInAManifestFailsTheRead(String mistake, String yaml, String named) {
        assertThatThrownBy(() -> KubernetesManifests.parse(yaml, "test"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(named);
    }

    static Stream<Arguments> manifestsWithOneMistake() {
        return Stream.of(
                Arguments.of("unknown field at the top of a spec", """
                        apiVersion: v1
                        kind: Service
                        metadata: {name: dht}
                        spec: {clusterIp: None}
                        """, "Unrecognized field \"clusterIp\""),
                Arguments.of("unknown field deep in the pod template", """
                        apiVersion: apps/v1
                        kind: StatefulSet
                        metadata: {name: dht}
                        spec:
                          template:
                            spec:
                              terminationGracePeriod: 40
                        """, "Unrecognized field \"terminationGracePeriod\""),
                Arguments.of("duplicate key", """
                        apiVersion: policy/v1
                        kind: PodDisruptionBudget
                        metadata: {name: dht}
                        spec: {maxUnavailable: 1, maxUnavailable: 2}
                        """, "Duplicate field 'maxUnavailable'"),
                Arguments.of("wrong apiVersion for the kind", """
                        apiVersion: policy/v1beta1
                        kind: PodDisruptionBudget
                        metadata: {name: dht}
                        """, "must have apiVersion policy/v1"),
                Arguments.of("a kind this project does not deploy", """
                        apiVersion: apps/v1
                        kind: Deployment
                        metadata: {name: dht}
                        """, "kind 'Deployment' is not one of"));
    }

    @Test
    void aFieldKustomizeDoesNotKnowFailsTheRead(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resource: [statefulset.yaml]
                """);

        assertThatThrownBy(() -> KubernetesManifests.readKustomization(dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unrecognized field \"resource\"");
    }

    @Test
    void threeNodesStartInParallelBehindTheHeadlessService() {
        StatefulSet statefulSet = k8s.one(StatefulSet.class);
        Map<String, String> podLabels = statefulSet.getSpec().getTemplate().getMetadata().getLabels();
        Service peers = k8s.named(Service.class, statefulSet.getSpec().getServiceName());

        assertThat(statefulSet.getSpec().getReplicas()).isEqualTo(3);
        assertThat(statefulSet.getSpec().getPodManagementPolicy()).isEqualTo("Parallel");
        assertThat(peers.getSpec().getClusterIP()).as("the peers' Service is headless").isEqualTo("None");
        assertThat(peers.getSpec().getPublishNotReadyAddresses()).as("peers resolve each other while starting").isTrue();
        assertThat(statefulSet.getSpec().getSelector().getMatchLabels()).isEqualTo(podLabels);
        assertThat(k8s.all(Service.class)).hasSize(2).allSatisfy(service ->
                assertThat(service.getSpec().getSelector()).as(service.getMetadata().getName()).isEqualTo(podLabels));
        String api = k8s.portSetBy("SERVER_PORT").getName();
        assertThat(peers.getSpec().getPorts()).as("the headless Service's ports name container ports")
                .allSatisfy(port -> assertThat(k8s.portNamed(port.getTargetPort().getStrVal()).getContainerPort())
                        .isEqualTo(port.getPort()))
                .anySatisfy(port -> assertThat(port.getTargetPort().getStrVal()).isEqualTo(api));
    }

    @Test
    void clientsReachOnlyTheApiAndTheActuatorHasAPortOfItsOwn() {
        StatefulSet statefulSet = k8s.one(StatefulSet.class);
        ContainerPort api = k8s.portSetBy("SERVER_PORT");
        ContainerPort management = k8s.portSetBy("MANAGEMENT_SERVER_PORT");
        Container node = k8s.nodeContainer();
        Map<String, String> annotations = statefulSet.getSpec().getTemplate().getMetadata().getAnnotations();
        List<Service> forClients = k8s.all(Service.class).stream()
                .filter(service -> !service.getMetadata().getName().equals(statefulSet.getSpec().getServiceName()))
                .toList();

        assertThat(management.getContainerPort()).isNotEqualTo(api.getContainerPort());
        assertThat(forClients).as("the clients' Service").singleElement()
                .satisfies(clients -> assertThat(clients.getSpec().getPorts()).as("its ports: the API's only")
                        .singleElement().satisfies(port -> assertThat(port.getTargetPort().getStrVal())
                                .isEqualTo(api.getName())));
        for (Probe probe : List.of(node.getStartupProbe(), node.getLivenessProbe(), node.getReadinessProbe())) {
            assertThat(probe.getHttpGet().getPort().getStrVal()).as("probe of %s", probe.getHttpGet().getPath())
                    .isEqualTo(management.getName());
        }
        assertThat(annotations).containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", String.valueOf(management.getContainerPort()))
                .containsEntry("prometheus.io/path", "/actuator/prometheus");
    }

    @Test
    void theImageDefaultsToThePodsPorts() throws IOException {
        String dockerfile = Files.readString(PROJECT.resolve("Dockerfile"));
        Map<String, String> pod = k8s.podEnvironment(0, TEST_SECRET);

        for (String variable : List.of("SERVER_PORT", "MANAGEMENT_SERVER_PORT")) {
            Matcher set = Pattern.compile("(?m)^ENV .*\\b" + variable + "=(\\d+)").matcher(dockerfile);
            assertThat(set.find()).as("the Dockerfile's ENV sets %s", variable).isTrue();
            assertThat(set.group(1)).as(variable).isEqualTo(pod.get(variable));
            assertThat(dockerfile).as("EXPOSE of %s", variable)
                    .containsPattern("(?m)^EXPOSE .*\\b" + set.group(1) + "\\b");
        }
    }

    @Test
    void eachPodIsTheNodeOfDhtNodesWithItsStableName() {
        StatefulSet statefulSet = k8s.one(StatefulSet.class);
        int replicas = statefulSet.getSpec().getReplicas();
        int containerPort = k8s.nodeContainer().getPorts().get(0).getContainerPort();
        List<String> stableNames = IntStream.range(0, replicas)
                .mapToObj(i -> "http://" + statefulSet.getMetadata().getName() + "-" + i + "."
                        + statefulSet.getSpec().getServiceName() + ":" + containerPort)
                .toList();

        for (int ordinal = 0; ordinal < replicas; ordinal++) {
            Map<String, String> env = k8s.podEnvironment(ordinal, TEST_SECRET);
            assertThat(Arrays.asList(env.get("DHT_NODES").split(","))).isEqualTo(stableNames);
            assertThat(env.get("DHT_SELF")).as("DHT_SELF of pod %d", ordinal).isEqualTo(stableNames.get(ordinal));
            assertThat(env.get("SERVER_PORT")).as("SERVER_PORT = containerPort").isEqualTo(String.valueOf(containerPort));
            assertThat(k8s.portSetBy("SERVER_PORT")).as("the first port is the API's")
                    .isEqualTo(k8s.nodeContainer().getPorts().get(0));
        }
    }

    @Test
    void everyDhtVariableOfAPodBindsToASettingOfTheNode(@TempDir Path dataDir) {
        Map<String, Object> dhtVariables = new HashMap<>();
        k8s.podEnvironment(1, TEST_SECRET).forEach((name, value) -> {
            if (name.startsWith("DHT_")) {
                dhtVariables.put(name, value);
            }
        });
        dhtVariables.put("DHT_DATA_DIR", dataDir.toString());   // the pod's path is not writable here
        Binder binder = new Binder(ConfigurationPropertySources.from(
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, dhtVariables)));

        Set<String> taken = new HashSet<>();
        BoundPropertiesTrackingBindHandler tracking = new BoundPropertiesTrackingBindHandler(
                property -> taken.add(((PropertySourceOrigin) property.getOrigin()).getPropertyName()));
        DhtProperties settings = binder.bind("dht", Bindable.of(DhtProperties.class), tracking).get();
        binder.bind("dht", Bindable.of(AdmissionProperties.class), tracking);
        binder.bind("dht", Bindable.of(ReplicaClientProperties.class), tracking);
        binder.bind("dht.tls", Bindable.of(TlsProperties.class), tracking);

        assertThat(taken).as("the variables a setting took: a typo or a removed setting would be left over")
                .containsExactlyInAnyOrderElementsOf(dhtVariables.keySet())
                .contains("DHT_SELF", "DHT_NODES", "DHT_DATA_DIR", "DHT_CLUSTER_SECRET");
        assertThat(settings.self()).isEqualTo(URI.create("http://dht-1.dht:8080"));
        assertThat(settings.nodes()).hasSize(3);
        assertThat(settings.clusterSecret()).isEqualTo(TEST_SECRET.apply(clusterSecret().getValueFrom().getSecretKeyRef()));
    }

    @Test
    void clusterSecretComesFromASecretThatTheRepositoryDoesNotHold() throws IOException {
        EnvVar secret = clusterSecret();

        assertThat(secret.getValue()).as("inlined value").isNull();
        assertThat(secret.getValueFrom().getSecretKeyRef().getName()).isNotBlank();
        assertThat(secret.getValueFrom().getSecretKeyRef().getKey()).isNotBlank();
        assertThat(k8s.objects()).noneMatch(Secret.class::isInstance);
        for (ConfigMap configMap : k8s.all(ConfigMap.class)) {
            assertThat(configMap.getData().keySet()).noneMatch(key -> key.toUpperCase().contains("SECRET"));
        }
        try (Stream<Path> files = Stream.concat(Files.walk(PROJECT.resolve("k8s")), Files.walk(PROJECT.resolve("config")))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                assertThat(Files.readString(file)).as("%s: a Secret, inline or generated, even if not listed", PROJECT.relativize(file))
                        .doesNotContainPattern("kind:\\s*Secret\\b").doesNotContain("secretGenerator").doesNotContain("stringData");
            }
        }
    }

    @Test
    void dataDirIsOnThePodsOwnVolumeClaim() {
        StatefulSet statefulSet = k8s.one(StatefulSet.class);
        Path dataDir = Path.of(k8s.podEnvironment(0, TEST_SECRET).get("DHT_DATA_DIR"));
        List<String> claimNames = statefulSet.getSpec().getVolumeClaimTemplates().stream()
                .map(claim -> claim.getMetadata().getName()).toList();

        VolumeMount mount = k8s.nodeContainer().getVolumeMounts().stream()
                .filter(candidate -> dataDir.startsWith(candidate.getMountPath())).findFirst()
                .orElseThrow(() -> new AssertionError("no volume mounted at or above DHT_DATA_DIR " + dataDir));
        assertThat(claimNames).as("the volume at %s comes from a volumeClaimTemplate", dataDir).contains(mount.getName());
        assertThat(statefulSet.getSpec().getTemplate().getSpec().getVolumes()).as("no pod volume shadows the claim")
                .noneMatch(volume -> volume.getName().equals(mount.getName()));
        PersistentVolumeClaim claim = statefulSet.getSpec().getVolumeClaimTemplates().get(claimNames.indexOf(mount.getName()));
        assertThat(claim.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
        assertThat(claim.getSpec().getResources().getRequests()).containsKey("storage");
    }

    @Test
    void heapIsSizedFromTheContainersMemoryLimit() {
        Container node = k8s.nodeContainer();
        Map<String, Quantity> requests = node.getResources().getRequests();
        Map<String, Quantity> limits = node.getResources().getLimits();
        String javaOptions = k8s.podEnvironment(0, TEST_SECRET).getOrDefault("JAVA_TOOL_OPTIONS", "");
        Matcher percentage = Pattern.compile("-XX:MaxRAMPercentage=(\\d+(\\.\\d+)?)").matcher(javaOptions);

        assertThat(requests).containsKeys("cpu", "memory");
        assertThat(limits).containsKeys("cpu", "memory");
        assertThat(Quantity.getAmountInBytes(limits.get("memory"))).isGreaterThanOrEqualTo(Quantity.getAmountInBytes(requests.get("memory")));
        assertThat(percentage.find()).as("JAVA_TOOL_OPTIONS sets -XX:MaxRAMPercentage: %s", javaOptions).isTrue();
        assertThat(Double.parseDouble(percentage.group(1))).as("heap share, the rest is LevelDB's and Netty's").isBetween(25.0, 75.0);
        Matcher initial = Pattern.compile("-XX:InitialRAMPercentage=(\\d+(\\.\\d+)?)").matcher(javaOptions);
        assertThat(initial.find()).as("JAVA_TOOL_OPTIONS sets -XX:InitialRAMPercentage: %s", javaOptions).isTrue();
        assertThat(initial.group(1)).as("the heap starts at its full size (as -Xms = -Xmx)").isEqualTo(percentage.group(1));
        assertThat(javaOptions).doesNotContain("-Xmx").doesNotContain("-XX:MaxHeapSize");
    }

    @Test
    void podLeavesTheEndpointsThenDrainsWithinTheGracePeriod() throws IOException {
        PodSpec pod = k8s.one(StatefulSet.class).getSpec().getTemplate().getSpec();
        List<String> preStop = k8s.nodeContainer().getLifecycle().getPreStop().getExec().getCommand();
        JsonNode settings;
        try (InputStream applicationYml = DhtApplication.class.getResourceAsStream("/application.yml")) {
            settings = KubernetesManifests.STRICT_YAML.readTree(applicationYml);
        }
        Duration shutdownPhase = DurationStyle.detectAndParse(settings.at("/spring/lifecycle/timeout-per-shutdown-phase").asText());

        assertThat(settings.at("/server/shutdown").asText()).isEqualTo("graceful");
        assertThat(preStop).hasSize(2).first().isEqualTo("sleep");
        long preStopSeconds = Long.parseLong(preStop.get(1));
        assertThat(preStopSeconds).isPositive();
        assertThat(pod.getTerminationGracePeriodSeconds())
                .as("grace period > preStop %d s + graceful shutdown %s", preStopSeconds, shutdownPhase)
                .isGreaterThan(preStopSeconds + shutdownPhase.toSeconds());
    }

    @Test
    void disruptionBudgetLetsOneNodeGoAtATime() {
        PodDisruptionBudget budget = k8s.one(PodDisruptionBudget.class);

        assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
        assertThat(budget.getSpec().getMinAvailable()).isNull();
        assertThat(budget.getSpec().getSelector().getMatchLabels())
                .isEqualTo(k8s.one(StatefulSet.class).getSpec().getTemplate().getMetadata().getLabels());
    }

    @Test
    void settingsComeFromTheFileInConfig() {
        String configMapName = k8s.nodeContainer().getEnvFrom().get(0).getConfigMapRef().getName();

        // config/dht.env sets only what differs from the defaults, which may be nothing
        assertThat(k8s.named(ConfigMap.class, configMapName).getData())
                .isEqualTo(KubernetesManifests.readEnvFile(PROJECT.resolve("config/dht.env")));
    }

    @Test
    void aNodeConfiguredAsPodZeroIsAliveButNotReadyBeforeItsPeersExist(@TempDir Path dataDir) throws Exception {
        Map<String, Object> environment = new HashMap<>(k8s.podEnvironment(0, TEST_SECRET));
        environment.put("SERVER_PORT", "0");                    // any free ports; the probes use the ports' names
        environment.put("MANAGEMENT_SERVER_PORT", "0");
        environment.put("DHT_DATA_DIR", dataDir.toString());
        Map<String, Probe> probes = new LinkedHashMap<>();
        Container node = k8s.nodeContainer();
        probes.put("startup", node.getStartupProbe());
        probes.put("liveness", node.getLivenessProbe());
        probes.put("readiness", node.getReadinessProbe());
        assertThat(probes.get("liveness").getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
        assertThat(probes.get("readiness").getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");

        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(DhtApplication.class)
                .initializers(context -> context.getEnvironment().getPropertySources().addFirst(
                        new SystemEnvironmentPropertySource("pod-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, environment)))
                .run()) {
            int apiPort = ((WebServerApplicationContext) app).getWebServer().getPort();
            int managementPort = app.getEnvironment().getRequiredProperty("local.management.port", Integer.class);
            Map<String, Integer> ports = Map.of(k8s.portSetBy("SERVER_PORT").getName(), apiPort,
                    k8s.portSetBy("MANAGEMENT_SERVER_PORT").getName(), managementPort);
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            assertThat(app.getBean(DhtProperties.class).self()).isEqualTo(URI.create("http://dht-0.dht:8080"));
            probes.forEach((kind, probe) -> {
                assertThat(probe).as("%s probe", kind).isNotNull();
                String path = probe.getHttpGet().getPath();
                HttpResponse<String> answer = get(http, ports.get(probe.getHttpGet().getPort().getStrVal()), path);
                // alone, pod 0 cannot form the cluster (the view log needs a majority of dht.nodes): it is kept
                // alive and started, and gets no client traffic until its peers exist
                assertThat(answer.statusCode()).as("%s probe GET %s: %s", kind, path, answer.body())
                        .isEqualTo(kind.equals("readiness") ? 503 : 200);
            });
            String scrapePath = k8s.one(StatefulSet.class).getSpec().getTemplate().getMetadata().getAnnotations()
                    .get("prometheus.io/path");
            HttpResponse<String> metrics = get(http, managementPort, scrapePath);
            assertThat(metrics.statusCode()).as("the Prometheus scrape on the annotated port").isEqualTo(200);
            assertThat(metrics.body()).contains("dht_storage_size_bytes");
            assertThat(get(http, apiPort, "/actuator/health").statusCode()).as("the actuator on the API's port")
                    .isEqualTo(400);
        }
    }

    @Test
    void kubectlKustomizeRendersWhatTheFilesSay() throws Exception {
        Optional<Path> kubectl = onPath("kubectl");
        assumeTrue(kubectl.isPresent(), "kubectl is not on PATH: kustomize's own rendering of k8s/ is not checked here "
                + "(the files themselves were read and checked by the other tests)");
        Process process = new ProcessBuilder(kubectl.get().toString(), "kustomize", PROJECT.resolve("k8s").toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String rendered = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("kubectl kustomize k8s/ exit code").isZero();

        KubernetesManifests render = KubernetesManifests.parse(rendered, "kubectl kustomize k8s/");

        assertThat(kindsAndNames(render)).isEqualTo(kindsAndNames(k8s));
        assertThat(render.all(Service.class)).isEqualTo(k8s.all(Service.class));
        assertThat(render.all(PodDisruptionBudget.class)).isEqualTo(k8s.all(PodDisruptionBudget.class));
        assertThat(Objects.requireNonNullElse(render.one(ConfigMap.class).getData(), Map.of()))   // no data: omitted
                .isEqualTo(KubernetesManifests.readEnvFile(PROJECT.resolve("config/dht.env")));
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            assertThat(render.podEnvironment(ordinal, TEST_SECRET)).isEqualTo(k8s.podEnvironment(ordinal, TEST_SECRET));
        }
        KubernetesManifests.Kustomization kustomization =
                KubernetesManifests.read(PROJECT.resolve("k8s/kustomization.yaml"), KubernetesManifests.Kustomization.class);
        assertThat(kustomization.images()).singleElement().satisfies(image -> {
            assertThat(image.name()).isEqualTo(k8s.nodeContainer().getImage());
            assertThat(render.nodeContainer().getImage()).isEqualTo(image.newName() + ":" + image.newTag());
        });
    }

    private static EnvVar clusterSecret() {
        return k8s.nodeContainer().getEnv().stream().filter(variable -> "DHT_CLUSTER_SECRET".equals(variable.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("no DHT_CLUSTER_SECRET in the StatefulSet's env"));
    }

    /** Kind and name of every object; a generated ConfigMap's name without kustomize's hash suffix. */
    private static List<String> kindsAndNames(KubernetesManifests manifests) {
        List<String> names = new ArrayList<>();
        for (HasMetadata object : manifests.objects()) {
            String name = object.getMetadata().getName();
            names.add(object.getKind() + "/" + (object instanceof ConfigMap ? name.replaceFirst("-[a-z0-9]{10}$", "") : name));
        }
        return names.stream().sorted().toList();
    }

    private static Optional<Path> onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, program))
                .filter(Files::isExecutable)
                .findFirst();
    }

    private static HttpResponse<String> get(HttpClient http, int port, String path) {
        return send(http, HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(5)).build());
    }

    private static HttpResponse<String> send(HttpClient http, HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(request.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(request.uri() + ": interrupted", e);
        }
    }
}
