package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.testing.Backups;
import dev.dht.testing.Backups.RestoreRun;
import dev.dht.testing.FailingHttpFront;
import dev.dht.testing.InProcessCluster;
import dev.dht.testing.S3ProxyServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Backups to S3, against a real S3-compatible server (S3Proxy in a process of its own): a 3-node cluster backs up
 * to {@code s3://bucket/prefix} through an endpoint override with path-style access, each member's part large
 * enough to be several multipart parts and split into two files; the backup lists, verifies and restores into
 * a 5-node cluster from S3, and a delete removes its objects. Behind a front that answers 500 to uploads of backup
 * files (multipart parts or whole objects): an upload that fails once is retried and the backup completes; one that
 * keeps failing is tried the SDK's 4 times, then the backup fails naming the member and the object, and the aborted
 * upload leaves no object.
 */
class S3BackupTest {
    private static final String BUCKET = "dht-backups";
    private static final int KEYS = 400;
    private static final int VALUE_BYTES = 48 * 1024;

    @TempDir
    Path root;
    private S3ProxyServer s3;
    private InProcessCluster source;
    private InProcessCluster target;

    @BeforeEach
    void startS3() throws Exception {
        assumeTrue(Files.isRegularFile(S3ProxyServer.jar()), "target/s3proxy/s3proxy.jar missing: run through Maven");
        s3 = S3ProxyServer.start(root.resolve("s3"));
        System.setProperty("aws.accessKeyId", S3ProxyServer.ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", S3ProxyServer.SECRET_KEY);
        try (S3Client client = client()) {
            client.createBucket(request -> request.bucket(BUCKET));
        }
    }

    @AfterEach
    void stop() {
        for (AutoCloseable closeable : new AutoCloseable[] {target, source, s3}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception ignored) {
                // closing the rest matters more
            }
        }
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
    }

    private S3Client client() {
        return S3Client.builder().endpointOverride(s3.endpoint()).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY)))
                .build();
    }

    @Test
    void backupToS3RestoresFromS3() {
        String location = "s3://" + BUCKET + "/cluster-a";
        source = InProcessCluster.start(3, root.resolve("source"), Map.of(
                "dht.backup.location", location,
                "dht.backup.s3-endpoint", s3.endpoint().toString(),
                "dht.backup.s3-path-style", "true",
                "dht.backup.file-size", "10MB",
                "dht.replica-timeout", "10s"));
        Random random = new Random(7);
        byte[][] values = new byte[KEYS][];
        for (int i = 0; i < KEYS; i++) {
            values[i] = new byte[VALUE_BYTES];
            random.nextBytes(values[i]);
            assertThat(source.client(i % 3).put("blob-" + i, values[i], null)).isEqualTo(201);
        }

        String id = Backups.start(source.client(0), false);
        JsonNode backup = Backups.awaitEnd(source.client(0), id, Duration.ofMinutes(3));

        assertThat(backup.get("state").asText()).as("%s", backup).isEqualTo("done");
        // a PUT at 2/3 waits for two copies; the third may still be a hint when the backup scans
        assertThat(backup.get("bytes").asLong()).as("at least the two acknowledged copies of ~19 MB")
                .isGreaterThan(2L * KEYS * VALUE_BYTES);
        try (S3Client client = client()) {
            long files = client.listObjectsV2(request -> request.bucket(BUCKET).prefix("cluster-a/" + id + "/"))
                    .contents().stream().filter(object -> object.key().endsWith(".dhtb")).count();
            assertThat(files).as("each member's part split at 10MB").isGreaterThanOrEqualTo(6);
        }
        String[] s3Options = {"--s3-endpoint", s3.endpoint().toString(), "--s3-path-style"};
        RestoreRun verify = Backups.restore(concat(new String[] {"--from", location, "--backup", id, "--verify"}, s3Options));
        assertThat(verify.status()).as("%s %s", verify.out(), verify.err()).isZero();

        target = InProcessCluster.start(5, root.resolve("target"), Map.of("dht.replica-timeout", "10s"));
        RestoreRun restore = Backups.restore(concat(new String[] {"--from", location, "--backup", id,
                "--into", target.url(0).toString(), "--checkpoint", root.resolve("s3.checkpoint").toString()}, s3Options));

        assertThat(restore.status()).as("%s %s", restore.out(), restore.err()).isZero();
        for (int i = 0; i < KEYS; i++) {
            HttpResponse<byte[]> read = target.client(i % 5).get("blob-" + i, "2/3");
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo(values[i]);
        }
        target.close(); // eight nodes and S3Proxy on two cores: the delete below lists and deletes a dozen objects
        target = null;
        HttpResponse<byte[]> deleted = source.client(1).admin("DELETE", "/actuator/backups/" + id, null,
                InProcessCluster.SECRET, Duration.ofSeconds(60));
        assertThat(deleted.statusCode()).isEqualTo(204);
        try (S3Client client = client()) {
            assertThat(client.listObjectsV2(request -> request.bucket(BUCKET).prefix("cluster-a/" + id + "/"))
                    .contents()).isEmpty();
        }
    }

    @Test
    void aFailedUploadIsRetriedAndOneThatKeepsFailingFailsTheBackupLeavingNoObject() throws Exception {
        Map<String, Set<String>> attempts = new ConcurrentHashMap<>();
        AtomicBoolean alwaysFail = new AtomicBoolean();
        try (FailingHttpFront front = FailingHttpFront.start(s3.endpoint(), head -> {
            String line = head.substring(0, head.indexOf('\r'));
            if (!line.startsWith("PUT ") || !line.contains(".dhtb")) {
                return false;
            }
            Matcher attempt = Pattern.compile("(?i)\r\namz-sdk-request: attempt=(\\d+)").matcher(head);
            Set<String> seen = attempts.computeIfAbsent(line, part -> ConcurrentHashMap.newKeySet());
            boolean first = seen.isEmpty();
            seen.add(attempt.find() ? attempt.group(1) : "?");
            return alwaysFail.get() || first;
        })) {
            source = InProcessCluster.start(3, root.resolve("source"), Map.of(
                    "dht.backup.location", "s3://" + BUCKET + "/cluster-b",
                    "dht.backup.s3-endpoint", front.endpoint().toString(),
                    "dht.backup.s3-path-style", "true",
                    "dht.replica-timeout", "10s"));
            Random random = new Random(11);
            for (int i = 0; i < KEYS / 2; i++) {
                byte[] value = new byte[VALUE_BYTES];
                random.nextBytes(value);
                assertThat(source.client(i % 3).put("blob-" + i, value, null)).isEqualTo(201);
            }

            String retried = Backups.start(source.client(0), false);
            JsonNode done = Backups.awaitEnd(source.client(0), retried, Duration.ofMinutes(3));
            int failedOnce = front.failed();
            alwaysFail.set(true);
            String failing = Backups.start(source.client(0), false);
            JsonNode failed = Backups.awaitEnd(source.client(0), failing, Duration.ofMinutes(3));

            assertThat(done.get("state").asText()).as("first attempt of every part failed: %s", done)
                    .isEqualTo("done");
            assertThat(failedOnce).as("one failed attempt per member's upload").isGreaterThanOrEqualTo(3);
            assertThat(attempts.keySet()).as("parts of multipart uploads").anyMatch(line -> line.contains("partNumber="));
            RestoreRun verify = Backups.restore("--from", "s3://" + BUCKET + "/cluster-b", "--backup", retried,
                    "--verify", "--s3-endpoint", s3.endpoint().toString(), "--s3-path-style");
            assertThat(verify.status()).as("%s %s", verify.out(), verify.err()).isZero();
            assertThat(failed.get("state").asText()).as("%s", failed).isEqualTo("failed");
            assertThat(failed.get("error").asText()).contains("member ")
                    .contains("s3://" + BUCKET + "/cluster-b/" + failing + "/");
            Map<String, Set<String>> partsOfFailing = new HashMap<>(attempts);
            partsOfFailing.keySet().removeIf(line -> !line.contains("/" + failing + "/"));
            assertThat(partsOfFailing).as("an upload per member").hasSizeGreaterThanOrEqualTo(3);
            assertThat(partsOfFailing.values()).as("SDK attempts of each failing upload (its default retry policy)")
                    .allSatisfy(seen -> assertThat(seen).containsExactlyInAnyOrder("1", "2", "3", "4"));
            try (S3Client client = client()) {
                assertThat(client.listObjectsV2(request -> request.bucket(BUCKET)
                        .prefix("cluster-b/" + failing + "/")).contents())
                        .as("no data object").noneMatch(o -> o.key().endsWith(".dhtb"));
                assertThat(client.listMultipartUploads(request -> request.bucket(BUCKET)
                        .prefix("cluster-b/" + failing + "/")).uploads()).as("every upload aborted").isEmpty();
            }
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
