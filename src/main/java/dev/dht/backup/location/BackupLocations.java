package dev.dht.backup.location;

import java.nio.file.Path;

/** Opens a {@link BackupLocation} from its URI, {@code file:/path} or {@code s3://bucket/prefix}. */
public final class BackupLocations {

    private BackupLocations() {
    }

    /**
     * The location {@code uri} names, to read from (a restore).
     *
     * @param s3Endpoint  an S3 endpoint override (S3-compatible stores), empty for AWS
     * @param s3Region    the S3 region
     * @param s3PathStyle address buckets by path rather than host name
     * @throws IllegalArgumentException if {@code uri} is neither {@code file:} nor {@code s3://}
     */
    public static BackupLocation of(String uri, String s3Endpoint, String s3Region, boolean s3PathStyle) {
        return of(uri, S3BackupLocation.S3Options.forReading(s3Endpoint, s3Region, s3PathStyle));
    }

    /**
     * The location {@code uri} names, an S3 one with {@code s3}'s options.
     *
     * @throws IllegalArgumentException if {@code uri} is neither {@code file:} nor {@code s3://}
     */
    public static BackupLocation of(String uri, S3BackupLocation.S3Options s3) {
        if (uri.startsWith("file:")) {
            return new FileBackupLocation(Path.of(uri.substring("file:".length())));
        }
        if (uri.startsWith("s3://")) {
            return S3BackupLocation.create(uri, s3);
        }
        throw new IllegalArgumentException("a backup location is file:/path or s3://bucket/prefix, was " + uri);
    }
}
