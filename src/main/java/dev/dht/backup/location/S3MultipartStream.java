package dev.dht.backup.location;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * An object written to S3 as a multipart upload: bytes gather in a buffer of the part size; each full buffer is
 * uploaded as the next part ({@code UploadPart}) on the upload executor while the writer fills the next one, so
 * several parts may be in flight, as many as the location's {@link UploadBudget} lets through (one at least).
 * {@link #close()} uploads the rest, waits for every part and completes the upload (an object smaller than one part
 * is one {@code PutObject}); {@link #abort()} aborts it, leaving no object. The upload starts with the first full
 * part. Every object write carries the location's server-side encryption. Blocking: the writing thread waits for
 * the budget and, in {@link #close()}, for the parts. Not thread-safe.
 */
final class S3MultipartStream extends OutputStream {
    /** S3's largest number of parts of one upload. */
    static final int MAX_PARTS = 10_000;
    /** Least part size chosen, 8 MiB (S3's minimum is 5 MiB but for the last part). */
    static final long MIN_PART_BYTES = 8L << 20;
    /** S3's largest part, 5 GiB. */
    static final long MAX_PART_BYTES = 5L << 30;
    private final S3Client s3;
    private final String bucket;
    private final String key;
    private final int partBytes;
    private final UploadBudget budget;
    private final Executor uploads;
    private final ObjectEncryption encryption;
    private final List<CompletableFuture<CompletedPart>> parts = new ArrayList<>();
    private byte[] buffer;
    private int filled;
    private String uploadId;
    private boolean closed;

    /**
     * @param partBytes  bytes per part ({@link #partBytes(long)})
     * @param budget     bounds the bytes of the parts in flight, shared by the location's streams
     * @param uploads    where parts upload (it blocks on the network)
     * @param encryption what every object write asks of the server
     */
    S3MultipartStream(S3Client s3, String bucket, String key, int partBytes, UploadBudget budget, Executor uploads,
                      ObjectEncryption encryption) {
        this.s3 = s3;
        this.bucket = bucket;
        this.key = key;
        this.partBytes = partBytes;
        this.budget = budget;
        this.uploads = uploads;
        this.encryption = encryption;
    }

    /**
     * The part size of an object of up to {@code objectBytes}: the least whole number of MiB, at least
     * {@link #MIN_PART_BYTES}, that keeps it within {@link #MAX_PARTS} parts; at most {@link #MAX_PART_BYTES}.
     */
    static long partBytes(long objectBytes) {
        long perPart = (objectBytes + MAX_PARTS - 1) / MAX_PARTS;
        long mib = 1L << 20;
        long rounded = (perPart + mib - 1) / mib * mib;
        return Math.min(MAX_PART_BYTES, Math.max(MIN_PART_BYTES, rounded));
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        while (length > 0) {
            if (buffer == null) {
                buffer = new byte[partBytes];
            }
            int n = Math.min(length, partBytes - filled);
            System.arraycopy(bytes, offset, buffer, filled, n);
            filled += n;
            offset += n;
            length -= n;
            if (filled == partBytes) {
                uploadPart();
            }
        }
    }

    /** Hands the buffer to the executor as the next part, once the budget lets it through. */
    private void uploadPart() throws IOException {
        failIfAPartFailed();
        try {
            if (uploadId == null) {
                uploadId = s3.createMultipartUpload(request -> encryption.apply(request.bucket(bucket).key(key)))
                        .uploadId();
            }
        } catch (SdkException e) {
            abort();
            throw new IOException("cannot upload s3://" + bucket + "/" + key + ": " + e.getMessage(), e);
        }
        byte[] part = filled == buffer.length ? buffer : Arrays.copyOf(buffer, filled);
        buffer = null;
        filled = 0;
        int number = parts.size() + 1;
        try {
            budget.acquire(part.length);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort();
            throw new InterruptedIOException("interrupted while waiting to upload s3://" + bucket + "/" + key);
        }
        String upload = uploadId;
        parts.add(CompletableFuture.supplyAsync(() -> {
            try {
                String etag = s3.uploadPart(request -> request.bucket(bucket).key(key).uploadId(upload)
                        .partNumber(number), RequestBody.fromBytes(part)).eTag();
                return CompletedPart.builder().partNumber(number).eTag(etag).build();
            } finally {
                budget.release(part.length);
            }
        }, uploads));
    }

    /** Throws the failure of a part already done, if one failed. */
    private void failIfAPartFailed() throws IOException {
        for (CompletableFuture<CompletedPart> part : parts) {
            if (part.isCompletedExceptionally()) {
                awaitParts();
            }
        }
    }

    /** Waits for every part; the first failure aborts the upload and is thrown. */
    private List<CompletedPart> awaitParts() throws IOException {
        List<CompletedPart> done = new ArrayList<>();
        for (CompletableFuture<CompletedPart> part : parts) {
            try {
                done.add(part.join());
            } catch (CompletionException e) {
                abort();
                Throwable cause = e.getCause() == null ? e : e.getCause();
                throw new IOException("cannot upload s3://" + bucket + "/" + key + ": " + cause.getMessage(), cause);
            }
        }
        done.sort(Comparator.comparingInt(CompletedPart::partNumber));
        return done;
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            if (uploadId == null) {
                byte[] whole = buffer == null ? new byte[0] : Arrays.copyOf(buffer, filled);
                s3.putObject(request -> encryption.apply(request.bucket(bucket).key(key)), RequestBody.fromBytes(whole));
            } else {
                if (filled > 0) {
                    uploadPart();
                }
                List<CompletedPart> done = awaitParts();
                s3.completeMultipartUpload(request -> request.bucket(bucket).key(key).uploadId(uploadId)
                        .multipartUpload(upload -> upload.parts(done)));
            }
            closed = true;
            buffer = null;
        } catch (SdkException e) {
            abort();
            throw new IOException("cannot complete s3://" + bucket + "/" + key + ": " + e.getMessage(), e);
        }
    }

    /** Aborts the upload (no object appears); no-op once closed. Parts still uploading finish and are dropped. */
    void abort() {
        if (closed) {
            return;
        }
        closed = true;
        buffer = null;
        if (uploadId != null) {
            for (CompletableFuture<CompletedPart> part : parts) {
                try {
                    part.join();
                } catch (CompletionException ignored) {
                    // aborted anyway
                }
            }
            try {
                s3.abortMultipartUpload(request -> request.bucket(bucket).key(key).uploadId(uploadId));
            } catch (SdkException ignored) {
                // the bucket's lifecycle rule for incomplete uploads cleans it up
            }
        }
    }
}
