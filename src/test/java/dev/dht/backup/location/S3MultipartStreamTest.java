package dev.dht.backup.location;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * An S3 object written by {@link S3MultipartStream}, against a recording S3 client that takes 50 ms per part: the
 * part size grows with the largest file so an object stays within S3's 10 000 parts; parts upload several at once
 * but never more bytes at once than the budget, and the object completes whole, parts in order; every object write
 * asks for the configured server-side encryption; a part that fails aborts the upload and fails the close. (The
 * real S3 API is exercised by {@code S3BackupTest} against S3Proxy.)
 */
class S3MultipartStreamTest {
    private static final int MIB = 1 << 20;
    private final ExecutorService uploads = Executors.newFixedThreadPool(8);
    private final RecordingS3 recording = new RecordingS3();
    private final S3Client s3 = recording.client();

    @AfterEach
    void stop() {
        uploads.shutdownNow();
    }

    @Test
    void thePartSizeKeepsTheLargestFileWithinTenThousandParts() {
        long fourTerabytes = 4L << 40;

        assertThat(S3MultipartStream.partBytes(1L << 30)).isEqualTo(8L * MIB);
        assertThat(S3MultipartStream.partBytes(100)).isEqualTo(8L * MIB);
        long large = S3MultipartStream.partBytes(fourTerabytes + 70L * MIB);
        assertThat(large % MIB).isZero();
        assertThat((fourTerabytes + 70L * MIB + large - 1) / large).isLessThanOrEqualTo(S3MultipartStream.MAX_PARTS);
    }

    @Test
    void partsUploadSeveralAtOnceWithinTheBudgetAndTheObjectCompletesWhole() throws IOException {
        UploadBudget budget = new UploadBudget(3L * MIB);
        byte[] object = new byte[10 * MIB + MIB / 2];
        new Random(3).nextBytes(object);

        try (S3MultipartStream stream = new S3MultipartStream(s3, "b", "id/f.dhtb", MIB, budget, uploads,
                ObjectEncryption.NONE)) {
            for (int at = 0; at < object.length; at += 100_000) {
                stream.write(object, at, Math.min(100_000, object.length - at));
            }
        }

        assertThat(recording.mostUploadsAtOnce.get()).as("parts in flight at once").isBetween(2, 3);
        assertThat(budget.mostInFlight()).isLessThanOrEqualTo(3L * MIB);
        assertThat(recording.completedParts).extracting(CompletedPart::partNumber)
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        assertThat(recording.object()).isEqualTo(object);
    }

    @Test
    void everyObjectWriteAsksForTheServerSideEncryption() throws IOException {
        ObjectEncryption kms = ObjectEncryption.of("aws:kms", "arn:aws:kms:eu-west-1:1:key/k");
        try (S3MultipartStream stream = new S3MultipartStream(s3, "b", "id/f.dhtb", MIB, new UploadBudget(8L * MIB),
                uploads, kms)) {
            stream.write(new byte[2 * MIB]);
        }
        try (S3MultipartStream stream = new S3MultipartStream(s3, "b", "id/manifest.json", MIB,
                new UploadBudget(8L * MIB), uploads, ObjectEncryption.of("AES256", ""))) {
            stream.write(new byte[10]);
        }

        assertThat(recording.created).singleElement().satisfies(create -> {
            assertThat(create.serverSideEncryption()).isEqualTo(ServerSideEncryption.AWS_KMS);
            assertThat(create.ssekmsKeyId()).isEqualTo("arn:aws:kms:eu-west-1:1:key/k");
        });
        assertThat(recording.puts).singleElement()
                .satisfies(put -> assertThat(put.serverSideEncryption()).isEqualTo(ServerSideEncryption.AES256));
        assertThatThrownBy(() -> ObjectEncryption.of("AES256", "key")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ObjectEncryption.of("aws:kms:dsse", "")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aFailedPartAbortsTheUploadAndFailsTheClose() {
        recording.failPart = 2;
        S3MultipartStream stream = new S3MultipartStream(s3, "b", "id/f.dhtb", MIB, new UploadBudget(8L * MIB),
                uploads, ObjectEncryption.NONE);

        assertThatThrownBy(() -> {
            stream.write(new byte[3 * MIB + 10]);
            stream.close();
        }).isInstanceOf(IOException.class).hasMessageContaining("part 2 refused");
        assertThat(recording.aborted.get()).isEqualTo(1);
        assertThat(recording.completedParts).isEmpty();
    }

    /** An S3 client that keeps what it is sent, taking 50 ms per part. */
    private static final class RecordingS3 {
        final List<CreateMultipartUploadRequest> created = new ArrayList<>();
        final List<PutObjectRequest> puts = new ArrayList<>();
        final Map<Integer, byte[]> parts = new TreeMap<>();
        final List<CompletedPart> completedParts = new ArrayList<>();
        final AtomicInteger uploadsAtOnce = new AtomicInteger();
        final AtomicInteger mostUploadsAtOnce = new AtomicInteger();
        final AtomicInteger aborted = new AtomicInteger();
        volatile int failPart;

        S3Client client() {
            InvocationHandler handler = (proxy, method, args) -> switch (method.getName()) {
                case "createMultipartUpload" -> {
                    if (args[0] instanceof CreateMultipartUploadRequest request) {
                        created.add(request);
                        yield CreateMultipartUploadResponse.builder().uploadId("u1").build();
                    }
                    yield InvocationHandler.invokeDefault(proxy, method, args);
                }
                case "uploadPart" -> {
                    if (args[0] instanceof UploadPartRequest request) {
                        yield uploadPart(request, (RequestBody) args[1]);
                    }
                    yield InvocationHandler.invokeDefault(proxy, method, args);
                }
                case "completeMultipartUpload" -> {
                    if (args[0] instanceof CompleteMultipartUploadRequest request) {
                        completedParts.addAll(request.multipartUpload().parts());
                        yield CompleteMultipartUploadResponse.builder().build();
                    }
                    yield InvocationHandler.invokeDefault(proxy, method, args);
                }
                case "putObject" -> {
                    if (args[0] instanceof PutObjectRequest request) {
                        synchronized (puts) {
                            puts.add(request);
                        }
                        yield PutObjectResponse.builder().build();
                    }
                    yield InvocationHandler.invokeDefault(proxy, method, args);
                }
                case "abortMultipartUpload" -> {
                    if (args[0] instanceof java.util.function.Consumer<?>) {
                        yield InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    aborted.incrementAndGet();
                    yield AbortMultipartUploadResponse.builder().build();
                }
                default -> throw new UnsupportedOperationException(method.getName());
            };
            return (S3Client) Proxy.newProxyInstance(S3Client.class.getClassLoader(), new Class<?>[] {S3Client.class},
                    handler);
        }

        private UploadPartResponse uploadPart(UploadPartRequest request, RequestBody body) throws Exception {
            int now = uploadsAtOnce.incrementAndGet();
            mostUploadsAtOnce.accumulateAndGet(now, Math::max);
            try {
                Thread.sleep(50);
                if (request.partNumber() == failPart) {
                    throw S3Exception.builder().message("part " + failPart + " refused").statusCode(500).build();
                }
                try (InputStream in = body.contentStreamProvider().newStream()) {
                    byte[] bytes = in.readAllBytes();
                    synchronized (parts) {
                        parts.put(request.partNumber(), bytes);
                    }
                }
                return UploadPartResponse.builder().eTag("e" + request.partNumber()).build();
            } finally {
                uploadsAtOnce.decrementAndGet();
            }
        }

        byte[] object() {
            ByteArrayOutputStream whole = new ByteArrayOutputStream();
            for (CompletedPart part : completedParts) {
                byte[] bytes = parts.get(part.partNumber());
                if (bytes == null) {
                    throw new UncheckedIOException(new IOException("no part " + part.partNumber()));
                }
                whole.writeBytes(bytes);
            }
            return whole.toByteArray();
        }
    }
}
