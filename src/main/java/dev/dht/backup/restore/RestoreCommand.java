package dev.dht.backup.restore;

import dev.dht.backup.format.BackupCorruptException;
import dev.dht.backup.location.BackupLocation;
import dev.dht.backup.location.BackupLocations;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code java -jar dht.jar restore --from LOCATION --backup ID (--into URL[,URL...] | --verify) [--rate N]
 * [--checkpoint FILE] [--s3-endpoint URL] [--s3-region R] [--s3-path-style]}: restores a backup into a running
 * cluster (after reading it end to end once to check it, so that a corrupt backup writes nothing), or with
 * {@code --verify} reads it end to end and checks every checksum without writing. The target's cluster secret comes
 * from {@code DHT_CLUSTER_SECRET} or {@code --dht.cluster-secret=S}, as a node takes it.
 * Exit status: 0 when every record was acknowledged by a majority of its replicas (or the backup verified), 1 when
 * the restore or verification failed (the message names the file and block, or the replicas), 2 for bad usage.
 * Blocking: runs on the calling thread.
 */
public final class RestoreCommand {
    /** The command's name, the first argument of {@code dht.jar}. */
    public static final String COMMAND = "restore";
    private static final Set<String> FLAGS = Set.of("verify", "s3-path-style");
    private static final Set<String> OPTIONS = Set.of("from", "backup", "into", "rate", "checkpoint", "s3-endpoint",
            "s3-region", "dht.cluster-secret");
    private static final String USAGE = "usage: restore --from file:/path|s3://bucket/prefix --backup ID"
            + " (--into URL[,URL...] | --verify) [--rate RECORDS_PER_SECOND] [--checkpoint FILE]"
            + " [--s3-endpoint URL] [--s3-region REGION] [--s3-path-style]; secret: DHT_CLUSTER_SECRET";

    private RestoreCommand() {
    }

    /** Runs the command and exits the JVM with its status. */
    public static void main(String[] args) {
        System.exit(run(args, System.getenv(), System.out, System.err, System.console() != null));
    }

    /**
     * Runs the command; returns its exit status (see the class comment).
     *
     * @param environment where {@code DHT_CLUSTER_SECRET} is looked up
     * @param terminal    draw the progress bar in place (a console) rather than print log lines
     */
    public static int run(String[] args, Map<String, String> environment, PrintStream out, PrintStream err,
                          boolean terminal) {
        Map<String, String> options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("restore: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        String from = options.get("from");
        String backup = options.get("backup");
        boolean verify = options.containsKey("verify");
        if (from == null || backup == null || verify == options.containsKey("into")) {
            err.println(USAGE);
            return 2;
        }
        try {
            BackupLocation location = BackupLocations.of(from, options.getOrDefault("s3-endpoint", ""),
                    options.getOrDefault("s3-region", "us-east-1"), options.containsKey("s3-path-style"));
            Restore restore = new Restore(location, backup, out, terminal);
            if (verify) {
                long records = restore.verify();
                out.println("backup " + backup + " verified: " + records + " records, every checksum matches");
                return 0;
            }
            String secret = options.getOrDefault("dht.cluster-secret", environment.getOrDefault("DHT_CLUSTER_SECRET", ""));
            if (secret.isBlank()) {
                err.println("restore: the target's cluster secret is needed: set DHT_CLUSTER_SECRET or --dht.cluster-secret");
                return 2;
            }
            double rate = Double.parseDouble(options.getOrDefault("rate", "50000"));
            if (!(rate >= 1)) {
                err.println("restore: --rate must be at least 1 record per second");
                return 2;
            }
            List<URI> into = Arrays.stream(options.get("into").split(",")).map(String::strip).map(URI::create).toList();
            Path checkpointFile = Path.of(options.getOrDefault("checkpoint", "restore-" + backup + ".checkpoint"));
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            TargetCluster target = TargetCluster.connect(http, secret, into);
            restore.checkFiles();
            RestoreCheckpoint checkpoint = RestoreCheckpoint.open(checkpointFile, backup);
            out.println("restoring backup " + backup + " from " + location.describe() + " into "
                    + target.placement().members() + " (checkpoint " + checkpointFile + ")");
            restore.run(target, checkpoint, rate, System.currentTimeMillis());
            checkpoint.delete();
            return 0;
        } catch (BackupCorruptException | RestoreException | UncheckedIOException | IllegalArgumentException e) {
            err.println("restore: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("restore: interrupted");
            return 1;
        }
    }

    /** {@code --name value}, {@code --name=value} and the flags into a map; unknown names are refused. */
    static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String value = null;
            int equals = name.indexOf('=');
            if (equals >= 0) {
                value = name.substring(equals + 1);
                name = name.substring(0, equals);
            }
            if (FLAGS.contains(name)) {
                options.put(name, "true");
            } else if (OPTIONS.contains(name)) {
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("--" + name + " needs a value");
                    }
                    value = args[++i];
                }
                options.put(name, value);
            } else {
                throw new IllegalArgumentException("unknown option --" + name);
            }
        }
        return options;
    }
}
