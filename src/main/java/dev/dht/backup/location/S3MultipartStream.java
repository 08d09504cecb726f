package dev.dht.backup.location;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * An object written to S3 as a multipart upload: bytes gather in one buffer of {@link #PART_BYTES}; each full
 * buffer is uploaded as the next part ({@code UploadPart}), so memory is one part whatever the object's size.
 * {@link #close()} uploads the rest and completes the upload (an object smaller than one part is one
 * {@code PutObject}); {@link #abort()} aborts it, leaving no object. The upload starts with the first full part.
 * Blocking: network I/O on the writing thread. Not thread-safe.
 */
final class S3MultipartStream extends OutputStream {
    /** Bytes per part: S3's minimum part is 5 MiB (but for the last), at most 10 000 parts, so objects up to 80 GB. */
    static final int PART_BYTES = 8 << 20;
    private final S3Client s3;
    private final String bucket;
    private final String key;
    private final byte[] buffer = new byte[PART_BYTES];
    private final List<CompletedPart> parts = new ArrayList<>();
    private int filled;
    private String uploadId;
    private boolean closed;

    S3MultipartStream(S3Client s3, String bucket, String key) {
        this.s3 = s3;
        this.bucket = bucket;
        this.key = key;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        while (length > 0) {
            int n = Math.min(length, PART_BYTES - filled);
            System.arraycopy(bytes, offset, buffer, filled, n);
            filled += n;
            offset += n;
            length -= n;
            if (filled == PART_BYTES) {
                uploadPart();
            }
        }
    }

    private void uploadPart() throws IOException {
        try {
            if (uploadId == null) {
                uploadId = s3.createMultipartUpload(request -> request.bucket(bucket).key(key)).uploadId();
            }
            int number = parts.size() + 1;
            String etag = s3.uploadPart(request -> request.bucket(bucket).key(key).uploadId(uploadId)
                            .partNumber(number),
                    RequestBody.fromBytes(Arrays.copyOf(buffer, filled))).eTag();
            parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
            filled = 0;
        } catch (SdkException e) {
            abort();
            throw new IOException("cannot upload s3://" + bucket + "/" + key + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            if (uploadId == null) {
                s3.putObject(request -> request.bucket(bucket).key(key), RequestBody.fromBytes(Arrays.copyOf(buffer, filled)));
            } else {
                if (filled > 0) {
                    uploadPart();
                }
                s3.completeMultipartUpload(request -> request.bucket(bucket).key(key).uploadId(uploadId)
                        .multipartUpload(upload -> upload.parts(parts)));
            }
            closed = true;
        } catch (SdkException e) {
            abort();
            throw new IOException("cannot complete s3://" + bucket + "/" + key + ": " + e.getMessage(), e);
        }
    }

    /** Aborts the upload (no object appears); no-op once closed. */
    void abort() {
        if (closed) {
            return;
        }
        closed = true;
        if (uploadId != null) {
            try {
                s3.abortMultipartUpload(request -> request.bucket(bucket).key(key).uploadId(uploadId));
            } catch (SdkException ignored) {
                // the bucket's lifecycle rule for incomplete uploads cleans it up
            }
        }
    }
}
