package dev.dht;

import dev.dht.cli.LocalClusterSecret;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Runs a 3-node cluster on this machine for development: one JVM per node from this same jar, on ports
 * 8080, 8081 and 8082, with data under {@code ./data/node-PORT} and a freshly generated cluster secret, which it
 * writes to {@code ./data/cluster-secret} ({@code ./data/cluster-secret-PORT} for another base port, so two local
 * clusters keep theirs apart; {@link LocalClusterSecret}), readable by the owner only, for the actuator's write
 * operations ({@code X-Dht-Cluster-Secret}); the command line ({@code bin/dht}) finds it there by itself for a node of
 * the cluster. Node output is passed through
 * (each log line names its node). Ctrl-C stops all nodes gracefully.
 *
 * <p>The nodes share this machine's processors, so each gets its share of event loops
 * ({@code dht.io-threads} = processors / nodes, at least 1) unless the extra arguments set it: more loops than
 * cores only add thread hand-offs.
 *
 * <p>The nodes run with the C1 compiler only ({@code -XX:TieredStopAtLevel=1}): three JVMs on one machine otherwise
 * spend minutes compiling the same framework code with C2, each on the cores the others serve from. With C1 alone a
 * node needs about 0.6 of the CPU to be ready, and a loaded cluster's JIT is done within a minute instead of ten; a
 * node's peak with C2 after a full warm-up may be higher (docs/performance.md, "Start-up and warm-up"). The
 * benchmarks in gatling/ start their nodes with both compilers. Where {@code ./mvnw package} left its class data
 * sharing layout beside the jar ({@link ClassDataArchive}), the nodes start from it, with the classes a training
 * start loaded already parsed and verified.
 *
 * <p>With {@code --tls} the nodes speak HTTPS to clients and to each other, with mutual TLS between peers: a
 * throw-away CA and one certificate per node (for {@code localhost} and {@code 127.0.0.1}) are generated into
 * {@code ./data/tls/} ({@code ca.crt}, {@code node-PORT.crt}, {@code node-PORT.key}), and each node reads its own
 * through the SSL bundle {@code dht} with {@code reload-on-update}, so replacing the files rotates them. Clients
 * trust {@code data/tls/ca.crt} ({@code curl --cacert data/tls/ca.crt https://localhost:8080/v0/status}).
 *
 * <p>Usage: {@code java -jar target/dht.jar local-cluster [--base-port=8080] [--nodes=3] [--tls] [--backup-dir DIR]
 * [extra node args...]}; {@code --backup-dir} makes {@code DIR} every node's {@code dht.backup.location}
 * ({@code file:}). Blocks until the nodes exit.
 */
public final class LocalCluster {
    /** The first argument that selects this launcher. */
    public static final String COMMAND = "local-cluster";
    /** Where {@code --tls} writes the CA certificate and the nodes' certificates and keys. */
    static final Path TLS_DIR = Path.of("data", "tls");
    /** How long the generated certificates are valid. */
    private static final Duration TLS_VALIDITY = Duration.ofDays(30);

    private LocalCluster() {
    }

    /** Starts the nodes and waits for them; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        int basePort = 8080;
        int count = 3;
        boolean tls = false;
        List<String> extra = new ArrayList<>();
        for (int a = 0; a < args.length; a++) {
            String arg = args[a];
            if (arg.equals("--backup-dir") && a + 1 < args.length) {
                extra.add(backupLocation(args[++a]));
            } else if (arg.startsWith("--backup-dir=")) {
                extra.add(backupLocation(arg.substring("--backup-dir=".length())));
            } else if (arg.equals("--tls")) {
                tls = true;
            } else if (arg.startsWith("--base-port=")) {
                basePort = Integer.parseInt(arg.substring("--base-port=".length()));
            } else if (arg.startsWith("--nodes=")) {
                count = Integer.parseInt(arg.substring("--nodes=".length()));
            } else {
                extra.add(arg);
            }
        }
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            urls.add((tls ? "https" : "http") + "://localhost:" + (basePort + i));
        }
        byte[] secretBytes = new byte[24];
        new SecureRandom().nextBytes(secretBytes);
        String secret = HexFormat.of().formatHex(secretBytes);
        Path secretFile = LocalClusterSecret.file(Path.of(""), basePort);
        writeSecret(secretFile.toAbsolutePath(), secret);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String jar = ownJar();
        // the class data sharing layout that package writes beside the jar, when it is there and current
        List<String> launch = ClassDataArchive.beside(Path.of(jar)).map(ClassDataArchive::javaArguments)
                .orElse(List.of("-jar", jar));

        LocalCertificateAuthority authority = null;
        if (tls) {
            authority = LocalCertificateAuthority.create("dht local-cluster CA", TLS_VALIDITY);
            authority.writeCertificate(TLS_DIR.resolve("ca.crt").toAbsolutePath());
        }
        List<Process> nodes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int port = basePort + i;
            List<String> command = new ArrayList<>(List.of(java, "-Xms512m", "-Xmx512m", "-XX:TieredStopAtLevel=1"));
            command.addAll(launch);
            command.addAll(List.of(
                    "--server.port=" + port,
                    "--dht.self=" + urls.get(i),
                    "--dht.nodes=" + String.join(",", urls),
                    "--dht.data-dir=" + Path.of("data", "node-" + port).toAbsolutePath()));
            if (extra.stream().noneMatch(arg -> arg.startsWith("--dht.io-threads="))) {
                command.add("--dht.io-threads=" + Math.max(1, Runtime.getRuntime().availableProcessors() / count));
            }
            if (authority != null) {
                command.addAll(tlsArguments(authority, port));
            }
            command.addAll(extra);
            ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
            builder.environment().put("DHT_CLUSTER_SECRET", secret);
            nodes.add(builder.start());
        }
        System.out.println("local cluster: " + urls.stream().collect(Collectors.joining(" ")) + " (Ctrl-C stops it); "
                + "cluster secret in " + secretFile + (tls ? "; CA certificate in " + TLS_DIR.resolve("ca.crt") : ""));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            nodes.forEach(Process::destroy);
            for (Process node : nodes) {
                try {
                    node.waitFor();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "local-cluster-shutdown"));
        for (Process node : nodes) {
            node.waitFor();
        }
    }

    /** The node argument that makes {@code directory} (created if missing) the nodes' backup location. */
    private static String backupLocation(String directory) throws IOException {
        Path path = Files.createDirectories(Path.of(directory)).toAbsolutePath();
        return "--dht.backup.location=file:" + path;
    }

    /**
     * A certificate for the node on {@code port}, written to {@link #TLS_DIR}, and the arguments that make it the
     * node's SSL bundle {@code dht} (reloaded when the files change) with mutual TLS between peers.
     */
    private static List<String> tlsArguments(LocalCertificateAuthority authority, int port) {
        Path certificate = TLS_DIR.resolve("node-" + port + ".crt").toAbsolutePath();
        Path key = TLS_DIR.resolve("node-" + port + ".key").toAbsolutePath();
        authority.issue(List.of("localhost", "127.0.0.1"), TLS_VALIDITY).writeTo(certificate, key);
        String bundle = "--spring.ssl.bundle.pem.dht.";
        return List.of(
                bundle + "keystore.certificate=file:" + certificate,
                bundle + "keystore.private-key=file:" + key,
                bundle + "truststore.certificate=file:" + TLS_DIR.resolve("ca.crt").toAbsolutePath(),
                bundle + "reload-on-update=true",
                "--dht.tls.bundle=dht",
                "--dht.tls.client-auth=want");
    }

    /** Replaces {@code file} with one that holds {@code secret}, readable by its owner only where files have modes. */
    private static void writeSecret(Path file, String secret) throws IOException {
        Files.createDirectories(file.getParent());
        Files.deleteIfExists(file);
        if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        Files.writeString(file, secret);
    }

    /** The executable jar this JVM was started from ({@code java -jar X}: the class path is exactly X). */
    private static String ownJar() {
        String classPath = System.getProperty("java.class.path", "");
        if (!classPath.endsWith(".jar") || classPath.contains(File.pathSeparator)) {
            throw new IllegalStateException("start the local cluster with: java -jar target/dht.jar " + COMMAND);
        }
        return new File(classPath).getAbsolutePath();
    }
}
