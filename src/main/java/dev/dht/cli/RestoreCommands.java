package dev.dht.cli;

import dev.dht.backup.restore.RestoreCommand;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code dht restore} and {@code dht verify}: a backup read from its location by this process and written into a
 * running cluster, or checked ({@link RestoreCommand}), with the command line's secret and TLS options.
 */
final class RestoreCommands {
    private RestoreCommands() {
    }

    /** The options of the backup read: where, which, and the S3 settings. */
    static final class Source {
        @Option(names = "--from", required = true, paramLabel = "LOCATION",
                description = "The backup location: file:/path or s3://bucket/prefix.")
        String from;
        @Option(names = "--backup", required = true, paramLabel = "ID", description = "The backup's id.")
        String backup;
        @Option(names = "--s3-endpoint", paramLabel = "URL", description = "An S3-compatible endpoint (default: AWS).")
        String s3Endpoint = "";
        @Option(names = "--s3-region", paramLabel = "REGION", description = "The S3 region (default us-east-1).")
        String s3Region = "us-east-1";
        @Option(names = "--s3-path-style", description = "Path-style S3 addressing (most S3-compatible stores).")
        boolean s3PathStyle;
    }

    /** {@code dht restore --from LOCATION --backup ID [--into URL[,URL...]]}. */
    @Command(name = "restore", mixinStandardHelpOptions = true,
            description = {"Restores a backup into a running cluster.", "Reads it end to end first (a corrupt backup "
                + "writes nothing), then writes every record to a majority of its replicas, paced, with a checkpoint "
                + "to resume from. Exit 0 restored; 1 no node of the target answered, or the backup location did not "
                + "read; 2 bad arguments, or refused while a membership change runs; 3 failed: the backup is corrupt "
                + "(the file and block on stderr), missing or not done, or a record's replicas did not acknowledge "
                + "it (the replicas on stderr)."})
    static final class Restore implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Mixin
        private Source source;
        @Option(names = "--into", split = ",", paramLabel = "URL", description = "Members of the target cluster, "
                + "comma-separated (default: --host).")
        private List<URI> into;
        @Option(names = "--verify", description = "Only check the backup, as dht verify does.")
        private boolean verify;
        @Option(names = "--rate", paramLabel = "RECORDS_PER_SECOND", description = "Records written per second "
                + "(default 50000).")
        private double rate = 50_000;
        @Option(names = "--checkpoint", paramLabel = "FILE", description = "The checkpoint file (default: "
                + "restore-ID.checkpoint here, or in the temporary directory where this one is not writable).")
        private Path checkpoint;

        Restore(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            List<URI> target = verify ? List.of() : into != null ? into : List.of(connection.host());
            RestoreCommand.Request request = new RestoreCommand.Request(source.from, source.backup, target, rate,
                    checkpoint, source.s3Endpoint, source.s3Region, source.s3PathStyle);
            String secret = verify ? null : connection.secret();
            if (secret == null && !verify) {
                secret = LocalClusterSecret.find(target, context.workingDir()).orElse(null);
            }
            return RestoreCommand.run(request, secret, http(connection.sslContext()), context.out(), context.err(),
                    context.terminal());
        }
    }

    /** {@code dht verify --from LOCATION --backup ID}. */
    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = {"Checks a backup without writing.", "Reads it end to end and checks every checksum. Exit "
                + "0 verified; 1 the backup location did not read; 2 bad arguments; 3 failed: a file is corrupt or "
                + "truncated (the file and block on stderr), or the backup is missing or not done."})
    static final class Verify implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private Source source;

        Verify(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            RestoreCommand.Request request = new RestoreCommand.Request(source.from, source.backup, List.of(), 1, null,
                    source.s3Endpoint, source.s3Region, source.s3PathStyle);
            return RestoreCommand.run(request, null, null, context.out(), context.err(), context.terminal());
        }
    }

    /** The client of the target's nodes. */
    private static HttpClient http(SSLContext ssl) {
        HttpClient.Builder builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5));
        if (ssl != null) {
            builder.sslContext(ssl);
        }
        return builder.build();
    }
}
