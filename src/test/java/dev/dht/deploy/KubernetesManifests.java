package dev.dht.deploy;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes objects of {@code k8s/}, read strictly into fabric8's model: a field the model does not know,
 * a duplicate key or a kind this project does not deploy fails the read. Also resolves a pod's environment as
 * the kubelet would, for the tests that start nodes with it.
 */
public final class KubernetesManifests {
    /** The kinds {@code k8s/} may hold; anything else is a mistake. */
    private static final List<Class<? extends HasMetadata>> KINDS =
            List.of(ConfigMap.class, Service.class, StatefulSet.class, PodDisruptionBudget.class);
    private static final String KUSTOMIZE_API_VERSION = "kustomize.config.k8s.io/v1beta1";
    private static final Pattern ENV_LINE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(.*)");
    private static final Pattern VARIABLE_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    /**
     * Jackson over YAML, strict. fabric8's classes collect unknown fields in {@code additionalProperties} through
     * {@code @JsonAnySetter}, which would make {@code FAIL_ON_UNKNOWN_PROPERTIES} useless; the introspector below
     * disowns every any-setter, so an unknown field is an error.
     */
    static final ObjectMapper STRICT_YAML = YAMLMapper.builder()
            .annotationIntrospector(new NoAnySetters())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private final List<HasMetadata> objects;

    private KubernetesManifests(List<HasMetadata> objects) {
        this.objects = List.copyOf(objects);
    }

    /**
     * Reads {@code kustomization.yaml} in {@code dir} and what it lists: resource files, and resource directories
     * with a kustomization of their own (read the same way). ConfigMap generators become ConfigMaps named as the
     * generator, without kustomize's hash suffix. Other transformations (e.g. {@code images}) are not applied.
     */
    public static KubernetesManifests readKustomization(Path dir) {
        Kustomization kustomization = read(dir.resolve("kustomization.yaml"), Kustomization.class);
        if (!KUSTOMIZE_API_VERSION.equals(kustomization.apiVersion()) || !"Kustomization".equals(kustomization.kind())) {
            throw new IllegalArgumentException(dir + "/kustomization.yaml: expected apiVersion " + KUSTOMIZE_API_VERSION
                    + " and kind Kustomization, was " + kustomization.apiVersion() + " " + kustomization.kind());
        }
        List<HasMetadata> objects = new ArrayList<>();
        for (String resource : kustomization.resources()) {
            Path path = dir.resolve(resource).normalize();
            objects.addAll(Files.isDirectory(path) ? readKustomization(path).objects() : parse(readString(path), path.toString()).objects());
        }
        for (ConfigMapGenerator generator : kustomization.configMapGenerator()) {
            Map<String, String> data = new LinkedHashMap<>();
            generator.envs().forEach(file -> data.putAll(readEnvFile(dir.resolve(file))));
            ConfigMap configMap = new ConfigMap();
            configMap.setApiVersion("v1");
            configMap.setKind("ConfigMap");
            configMap.setMetadata(new ObjectMeta());
            configMap.getMetadata().setName(generator.name());
            configMap.setData(data);
            objects.add(configMap);
        }
        return new KubernetesManifests(objects);
    }

    /** Reads YAML documents (one file, or the output of {@code kubectl kustomize}); {@code source} names them in errors. */
    public static KubernetesManifests parse(String yaml, String source) {
        List<HasMetadata> objects = new ArrayList<>();
        try (MappingIterator<JsonNode> documents = STRICT_YAML.readerFor(JsonNode.class).readValues(yaml)) {
            while (documents.hasNextValue()) {
                JsonNode document = documents.nextValue();
                if (document == null || document.isNull() || document.isEmpty()) {
                    continue;
                }
                objects.add(toObject(document, source));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
        return new KubernetesManifests(objects);
    }

    private static HasMetadata toObject(JsonNode document, String source) throws IOException {
        String kind = document.path("kind").asText();
        String apiVersion = document.path("apiVersion").asText();
        for (Class<? extends HasMetadata> type : KINDS) {
            if (HasMetadata.getKind(type).equals(kind)) {
                if (!HasMetadata.getApiVersion(type).equals(apiVersion)) {
                    throw new IllegalArgumentException(source + ": " + kind + " must have apiVersion "
                            + HasMetadata.getApiVersion(type) + ", was " + apiVersion);
                }
                return STRICT_YAML.treeToValue(document, type);
            }
        }
        throw new IllegalArgumentException(source + ": kind '" + kind + "' is not one of " + KINDS.stream().map(HasMetadata::getKind).toList());
    }

    /**
     * Reads an env file as kustomize's {@code envs} does: {@code NAME=value} lines taken literally, blank lines and
     * {@code #} comments skipped. A line of another form is an error here (kustomize would look the name up in its
     * own environment).
     */
    public static Map<String, String> readEnvFile(Path file) {
        Map<String, String> entries = new LinkedHashMap<>();
        for (String line : readString(file).lines().toList()) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            Matcher entry = ENV_LINE.matcher(line);
            if (!entry.matches()) {
                throw new IllegalArgumentException(file + ": not a NAME=value line: " + line);
            }
            if (entries.put(entry.group(1), entry.group(2)) != null) {
                throw new IllegalArgumentException(file + ": " + entry.group(1) + " is set twice");
            }
        }
        return entries;
    }

    /** Every object, in the order read. */
    public List<HasMetadata> objects() {
        return objects;
    }

    /** Every object of one kind. */
    public <T extends HasMetadata> List<T> all(Class<T> kind) {
        return objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    /** The one object of a kind; fails when there is none or more than one. */
    public <T extends HasMetadata> T one(Class<T> kind) {
        List<T> found = all(kind);
        if (found.size() != 1) {
            throw new IllegalStateException("expected exactly one " + HasMetadata.getKind(kind) + ", found " + found.size());
        }
        return found.get(0);
    }

    /** The object of a kind with this name. */
    public <T extends HasMetadata> T named(Class<T> kind, String name) {
        return all(kind).stream().filter(object -> name.equals(object.getMetadata().getName())).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + HasMetadata.getKind(kind) + " named " + name));
    }

    /** The StatefulSet's one container (the dht node). */
    public Container nodeContainer() {
        List<Container> containers = one(StatefulSet.class).getSpec().getTemplate().getSpec().getContainers();
        if (containers.size() != 1) {
            throw new IllegalStateException("expected one container in the StatefulSet's pod, found " + containers.size());
        }
        return containers.get(0);
    }

    /** The node container's port whose number the variable {@code variable} (e.g. SERVER_PORT) of its pods sets. */
    public ContainerPort portSetBy(String variable) {
        String number = podEnvironment(0, secret -> "").get(variable);
        return nodeContainer().getPorts().stream()
                .filter(port -> String.valueOf(port.getContainerPort()).equals(number)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no container port " + number + " (" + variable + ")"));
    }

    /** The node container's port named {@code name}, as a probe or a Service's targetPort names it. */
    public ContainerPort portNamed(String name) {
        return nodeContainer().getPorts().stream().filter(port -> name.equals(port.getName())).findFirst()
                .orElseThrow(() -> new IllegalStateException("no container port named " + name));
    }

    /**
     * The environment of the node container in pod {@code ordinal}, as the kubelet builds it: {@code envFrom}
     * ConfigMaps first, then {@code env} in order, with {@code $(NAME)} references to earlier variables expanded,
     * {@code fieldRef metadata.name} = the pod's name and each {@code secretKeyRef} answered by {@code secrets}.
     */
    public Map<String, String> podEnvironment(int ordinal, Function<SecretKeySelector, String> secrets) {
        String podName = one(StatefulSet.class).getMetadata().getName() + "-" + ordinal;
        Container container = nodeContainer();
        Map<String, String> environment = new LinkedHashMap<>();
        for (EnvFromSource source : container.getEnvFrom()) {
            if (source.getConfigMapRef() == null || source.getPrefix() != null) {
                throw new IllegalStateException("only envFrom configMapRef without prefix is resolved here: " + source);
            }
            environment.putAll(named(ConfigMap.class, source.getConfigMapRef().getName()).getData());
        }
        for (EnvVar variable : container.getEnv()) {
            environment.put(variable.getName(), variable.getValueFrom() == null
                    ? expand(variable.getValue() == null ? "" : variable.getValue(), environment)
                    : resolve(variable, podName, secrets));
        }
        return environment;
    }

    private static String resolve(EnvVar variable, String podName, Function<SecretKeySelector, String> secrets) {
        EnvVarSource source = variable.getValueFrom();
        if (source.getFieldRef() != null && "metadata.name".equals(source.getFieldRef().getFieldPath())) {
            return podName;
        }
        if (source.getSecretKeyRef() != null) {
            return secrets.apply(source.getSecretKeyRef());
        }
        throw new IllegalStateException(variable.getName() + ": only fieldRef metadata.name and secretKeyRef are resolved here: " + source);
    }

    /** Kubernetes' {@code $(NAME)} expansion: a reference to a variable defined before is replaced, any other kept. */
    private static String expand(String value, Map<String, String> defined) {
        return VARIABLE_REFERENCE.matcher(value).replaceAll(reference -> Matcher.quoteReplacement(
                defined.getOrDefault(reference.group(1), reference.group())));
    }

    static <T> T read(Path file, Class<T> type) {
        try {
            return STRICT_YAML.readValue(file.toFile(), type);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The part of a kustomization this project uses; any other field fails the read. */
    record Kustomization(String apiVersion, String kind, List<String> resources, List<ConfigMapGenerator> configMapGenerator,
                         List<Image> images) {
        Kustomization {
            resources = resources == null ? List.of() : resources;
            configMapGenerator = configMapGenerator == null ? List.of() : configMapGenerator;
            images = images == null ? List.of() : images;
        }
    }

    /** A ConfigMap made from env files. */
    record ConfigMapGenerator(String name, List<String> envs) {
    }

    /** An image override: {@code name} in the manifests becomes {@code newName:newTag}. */
    record Image(String name, String newName, String newTag) {
    }

    /** Treats no method or field as {@code @JsonAnySetter}, so unknown fields reach FAIL_ON_UNKNOWN_PROPERTIES. */
    private static final class NoAnySetters extends JacksonAnnotationIntrospector {
        private static final long serialVersionUID = 1L;

        @Override
        public Boolean hasAnySetter(Annotated annotated) {
            return Boolean.FALSE;
        }
    }
}
