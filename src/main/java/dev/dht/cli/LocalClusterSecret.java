package dev.dht.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where {@code local-cluster} keeps the secret of a cluster, one file per cluster so that two local clusters on
 * different ports keep theirs apart: {@code data/cluster-secret} for the cluster on the default base port 8080,
 * {@code data/cluster-secret-PORT} for one on base port {@code PORT}; and how the command line finds it for a node of
 * such a cluster when no secret is given. Blocking file reads; call from the command's thread.
 */
public final class LocalClusterSecret {
    /** The base port whose secret file keeps the name it always had. */
    public static final int DEFAULT_BASE_PORT = 8080;
    private static final Set<String> LOCAL_HOSTS = Set.of("localhost", "127.0.0.1", "[::1]", "::1");

    private LocalClusterSecret() {
    }

    /** The secret file of the local cluster on {@code basePort}, relative to {@code workingDir}. */
    public static Path file(Path workingDir, int basePort) {
        String name = basePort == DEFAULT_BASE_PORT ? "cluster-secret" : "cluster-secret-" + basePort;
        return workingDir.resolve("data").resolve(name);
    }

    /**
     * The secret of the local cluster whose members are {@code members}: that of the first member on this machine
     * whose port is a base port with a secret file under {@code workingDir}; empty if none.
     */
    public static Optional<String> find(List<URI> members, Path workingDir) {
        for (URI member : members) {
            if (member.getHost() == null || !LOCAL_HOSTS.contains(member.getHost()) || member.getPort() < 0) {
                continue;
            }
            Path file = file(workingDir, member.getPort());
            if (Files.isReadable(file)) {
                try {
                    return Optional.of(Files.readString(file, StandardCharsets.UTF_8).strip());
                } catch (IOException unreadable) {
                    // as if absent: the request goes without a secret and its 403 says how to give one
                }
            }
        }
        return Optional.empty();
    }
}
