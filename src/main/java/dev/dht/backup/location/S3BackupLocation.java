package dev.dht.backup.location;

import dev.dht.backup.format.BackupManifest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Backups in an S3 bucket ({@code s3://bucket/prefix}), through the AWS SDK for Java v2: {@code prefix/ID/NAME}.
 * Files are written as multipart uploads ({@link S3MultipartStream}) in parts sized from {@code dht.backup.file-size}
 * (8 MiB, more where a file would need over 10 000 parts), several in flight at once within
 * {@code dht.backup.s3.upload-memory}; the object appears only when the upload completes. Every object is written with
 * {@code dht.backup.s3.sse}'s server-side encryption. The SDK retries a failed call (its default retry policy: 4
 * attempts with backoff); then the upload is aborted, the write fails and the backup with it. Credentials come
 * from the SDK's default chain (environment, web identity on Kubernetes, profile, instance role). With an endpoint
 * override (S3-compatible stores) checksums are computed only where the API requires them, as such stores often
 * refuse the newer default. Blocking: network I/O in every method; parts upload on daemon threads of their own.
 */
public final class S3BackupLocation implements BackupLocation {
    private final S3Client s3;
    private final String bucket;
    private final String prefix;
    private final String describe;
    private final int partBytes;
    private final UploadBudget budget;
    private final ObjectEncryption encryption;
    private final ExecutorService uploads;

    S3BackupLocation(S3Client s3, String bucket, String prefix, S3Options options) {
        this.s3 = s3;
        this.bucket = bucket;
        this.prefix = prefix.isEmpty() || prefix.endsWith("/") ? prefix : prefix + "/";
        this.describe = "s3://" + bucket + "/" + prefix;
        this.partBytes = (int) Math.min(Integer.MAX_VALUE - 8, S3MultipartStream.partBytes(options.largestFileBytes()));
        this.budget = new UploadBudget(options.uploadMemoryBytes());
        this.encryption = options.encryption();
        int threads = (int) Math.max(1, Math.min(16, options.uploadMemoryBytes() / partBytes));
        AtomicInteger count = new AtomicInteger();
        this.uploads = Executors.newFixedThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, "dht-s3-upload-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * What an S3 location needs besides its URI.
     *
     * @param endpoint          endpoint override (empty: AWS)
     * @param region            the region
     * @param pathStyle         path-style bucket addressing
     * @param encryption        the server-side encryption of every object written
     * @param uploadMemoryBytes bytes of parts in flight at once, at most (at least one part)
     * @param largestFileBytes  the largest file written, for the part size
     */
    public record S3Options(String endpoint, String region, boolean pathStyle, ObjectEncryption encryption,
                            long uploadMemoryBytes, long largestFileBytes) {
        /** Options of a location that is only read (a restore): no encryption asked, 64 MiB of parts, 1 GiB files. */
        public static S3Options forReading(String endpoint, String region, boolean pathStyle) {
            return new S3Options(endpoint, region, pathStyle, ObjectEncryption.NONE, 64L << 20, 1L << 30);
        }
    }

    /**
     * The location {@code s3://bucket/prefix}.
     *
     * @throws IllegalArgumentException if {@code uri} names no bucket
     */
    static S3BackupLocation create(String uri, S3Options options) {
        String rest = uri.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String prefix = slash < 0 ? "" : rest.substring(slash + 1);
        if (bucket.isEmpty()) {
            throw new IllegalArgumentException("an S3 location is s3://bucket/prefix, was " + uri);
        }
        S3ClientBuilder builder = S3Client.builder()
                .httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .region(Region.of(options.region()))
                .forcePathStyle(options.pathStyle());
        if (!options.endpoint().isEmpty()) {
            builder.endpointOverride(URI.create(options.endpoint()))
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        }
        return new S3BackupLocation(builder.build(), bucket, prefix, options);
    }

    private String key(String id, String name) {
        return prefix + FileBackupLocation.checkName(id) + "/" + FileBackupLocation.checkName(name);
    }

    @Override
    public OutputStream create(String id, String name) throws IOException {
        return new S3MultipartStream(s3, bucket, key(id, name), partBytes, budget, uploads, encryption);
    }

    @Override
    public void abort(OutputStream stream) {
        if (stream instanceof S3MultipartStream upload) {
            upload.abort();
        }
    }

    @Override
    public InputStream open(String id, String name) throws IOException {
        String key = key(id, name);
        try {
            return s3.getObject(request -> request.bucket(bucket).key(key));
        } catch (NoSuchKeyException e) {
            throw new NoSuchFileException(describe + key.substring(prefix.length()));
        } catch (SdkException e) {
            throw new IOException("cannot read s3://" + bucket + "/" + key + ": " + e.getMessage(), e);
        }
    }

    @Override
    public List<String> backupIds() throws IOException {
        List<String> ids = new ArrayList<>();
        String suffix = "/" + BackupManifest.FILE_NAME;
        for (S3Object object : objects(prefix)) {
            String key = object.key().substring(prefix.length());
            if (key.endsWith(suffix) && key.indexOf('/') == key.length() - suffix.length()) {
                ids.add(key.substring(0, key.length() - suffix.length()));
            }
        }
        return ids;
    }

    @Override
    public void delete(String id) throws IOException {
        // one DeleteObject per file, not DeleteObjects: a backup has a few files, and DeleteObjects needs a checksum
        // header (Content-MD5 or, from the SDK, x-amz-checksum-*) that S3-compatible stores do not all take
        // the manifest last: a delete cut short leaves a backup that is still listed, and can be deleted again
        String manifest = key(id, BackupManifest.FILE_NAME);
        try {
            for (S3Object object : objects(prefix + FileBackupLocation.checkName(id) + "/")) {
                if (!object.key().equals(manifest)) {
                    s3.deleteObject(request -> request.bucket(bucket).key(object.key()));
                }
            }
            s3.deleteObject(request -> request.bucket(bucket).key(manifest));
        } catch (SdkException e) {
            throw new IOException("cannot delete backup " + id + " at " + describe + ": " + e.getMessage(), e);
        }
    }

    private List<S3Object> objects(String keyPrefix) throws IOException {
        try {
            List<S3Object> objects = new ArrayList<>();
            s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket).prefix(keyPrefix).build())
                    .contents().forEach(objects::add);
            return objects;
        } catch (SdkException e) {
            throw new IOException("cannot list " + describe + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String describe() {
        return describe;
    }
}
