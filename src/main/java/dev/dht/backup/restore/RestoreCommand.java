package dev.dht.backup.restore;

import dev.dht.backup.format.BackupCorruptException;
import dev.dht.backup.location.BackupLocation;
import dev.dht.backup.location.BackupLocations;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code dht restore} and {@code dht verify} (the command line, {@code dev.dht.cli}, parses their options): restores a
 * backup into a running cluster (after reading it end to end once to check it, so that a corrupt backup writes
 * nothing), or verifies it: reads it end to end and checks every checksum without writing.
 * Exit status, as the command line's ({@code dev.dht.cli.Dht}): 0 when every record was acknowledged by a majority of
 * its replicas (or the backup verified); 1 when no node of the target answered, or the backup location could not be
 * read; 2 for bad usage or a restore the target refuses now (a membership change runs there); 3 when the restore or
 * verification failed: a corrupt or truncated file (the message names the file and block), a backup missing or not
 * {@code done}, a record a majority of its replicas did not acknowledge (the message names the replicas).
 * Blocking: runs on the calling thread.
 */
public final class RestoreCommand {
    /** Restored, or verified. */
    public static final int EXIT_OK = 0;
    /** No node of the target answered, or the backup location could not be read. */
    public static final int EXIT_UNREACHABLE = 1;
    /** Bad usage, or the target refuses a restore now. */
    public static final int EXIT_REFUSED = 2;
    /** The restore or verification failed: a corrupt backup, or records a majority did not acknowledge. */
    public static final int EXIT_FAILED = 3;

    /**
     * What to restore, and where.
     *
     * @param from        the backup location, {@code file:/path} or {@code s3://bucket/prefix}
     * @param backup      the backup's id
     * @param into        members of the target cluster (API URLs); empty to verify only
     * @param rate        records per second written, at least 1
     * @param checkpoint  the checkpoint file (null: {@code restore-ID.checkpoint} in the working directory)
     * @param s3Endpoint  an S3-compatible endpoint ("" for AWS)
     * @param s3Region    the S3 region
     * @param s3PathStyle path-style S3 addressing
     */
    public record Request(String from, String backup, List<URI> into, double rate, Path checkpoint, String s3Endpoint,
                          String s3Region, boolean s3PathStyle) {
    }

    private RestoreCommand() {
    }

    /**
     * Runs the restore (or the verification when {@code request.into()} is empty); returns its exit status (see the
     * class comment).
     *
     * @param secret   the target's cluster secret (not needed to verify)
     * @param http     the client of the target's nodes (its TLS settings)
     * @param terminal draw the progress bar in place (a console) rather than print log lines
     */
    public static int run(Request request, String secret, HttpClient http, PrintStream out, PrintStream err,
                          boolean terminal) {
        String backup = request.backup();
        boolean verify = request.into().isEmpty();
        try {
            BackupLocation location = BackupLocations.of(request.from(), request.s3Endpoint(), request.s3Region(),
                    request.s3PathStyle());
            Restore restore = new Restore(location, backup, out, terminal);
            if (verify) {
                long records = restore.verify();
                out.println("backup " + backup + " verified: " + records + " records, every checksum matches");
                return EXIT_OK;
            }
            if (secret == null || secret.isBlank()) {
                err.println("restore: the target's cluster secret is needed: set DHT_CLUSTER_SECRET or --secret-file");
                return EXIT_REFUSED;
            }
            if (!(request.rate() >= 1)) {
                err.println("restore: --rate must be at least 1 record per second");
                return EXIT_REFUSED;
            }
            Path checkpointFile = request.checkpoint() != null ? request.checkpoint() : defaultCheckpoint(backup);
            TargetCluster target = TargetCluster.connect(http, secret, request.into());
            restore.checkFiles();
            RestoreCheckpoint checkpoint = RestoreCheckpoint.open(checkpointFile, backup);
            out.println("restoring backup " + backup + " from " + location.describe() + " into "
                    + target.placement().members() + " (checkpoint " + checkpointFile + ")");
            restore.run(target, checkpoint, request.rate(), System.currentTimeMillis());
            checkpoint.delete();
            return EXIT_OK;
        } catch (BackupCorruptException e) {
            err.println("restore: " + e.getMessage());
            return EXIT_FAILED;
        } catch (RestoreException e) {
            err.println("restore: " + e.getMessage());
            return switch (e.kind()) {
                case FAILED -> EXIT_FAILED;
                case UNREACHABLE -> EXIT_UNREACHABLE;
                case REFUSED -> EXIT_REFUSED;
            };
        } catch (UncheckedIOException e) {
            err.println("restore: " + e.getMessage());
            return EXIT_UNREACHABLE;
        } catch (IllegalArgumentException e) {
            err.println("restore: " + e.getMessage());
            return EXIT_REFUSED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("restore: interrupted");
            return EXIT_UNREACHABLE;
        }
    }

    /**
     * {@code restore-ID.checkpoint} in the working directory, or in {@code java.io.tmpdir} where the working
     * directory is not writable (the container image's {@code /app}, which its user does not own). Blocking: a file
     * system check.
     */
    static Path defaultCheckpoint(String backup) {
        Path name = Path.of("restore-" + backup + ".checkpoint");
        return Files.isWritable(Path.of("").toAbsolutePath()) ? name
                : Path.of(System.getProperty("java.io.tmpdir")).resolve(name);
    }
}
