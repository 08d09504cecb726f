package dev.dht.backup.location;

import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;

/**
 * The server-side encryption every backup object is written with ({@code dht.backup.s3.sse}): none (the bucket's
 * default), {@code AES256} (SSE-S3, keys S3 manages) or {@code aws:kms} (SSE-KMS, with the KMS key
 * {@code dht.backup.s3.kms-key-id}, or the account's {@code aws/s3} key if none is given). Reads need nothing: S3
 * decrypts SSE-S3 and SSE-KMS objects for whoever may read them (and, for KMS, use the key).
 *
 * @param algorithm the SDK's value, null for none
 * @param kmsKeyId  the KMS key's id or ARN, null for the default key
 */
public record ObjectEncryption(ServerSideEncryption algorithm, String kmsKeyId) {
    /** No encryption asked for. */
    public static final ObjectEncryption NONE = new ObjectEncryption(null, null);

    /**
     * The encryption {@code sse} names ({@code ""}, {@code AES256} or {@code aws:kms}) with {@code kmsKeyId}.
     *
     * @throws IllegalArgumentException if {@code sse} is another value, or a key id is given without {@code aws:kms}
     */
    public static ObjectEncryption of(String sse, String kmsKeyId) {
        String key = kmsKeyId == null || kmsKeyId.isBlank() ? null : kmsKeyId.strip();
        ServerSideEncryption algorithm = switch (sse == null ? "" : sse.strip()) {
            case "" -> null;
            case "AES256" -> ServerSideEncryption.AES256;
            case "aws:kms" -> ServerSideEncryption.AWS_KMS;
            default -> throw new IllegalArgumentException("server-side encryption is AES256 or aws:kms, was " + sse);
        };
        if (key != null && algorithm != ServerSideEncryption.AWS_KMS) {
            throw new IllegalArgumentException("a KMS key id needs aws:kms server-side encryption");
        }
        return new ObjectEncryption(algorithm, key);
    }

    /** {@code request} with this encryption. */
    CreateMultipartUploadRequest.Builder apply(CreateMultipartUploadRequest.Builder request) {
        return algorithm == null ? request : request.serverSideEncryption(algorithm).ssekmsKeyId(kmsKeyId);
    }

    /** {@code request} with this encryption. */
    PutObjectRequest.Builder apply(PutObjectRequest.Builder request) {
        return algorithm == null ? request : request.serverSideEncryption(algorithm).ssekmsKeyId(kmsKeyId);
    }
}
