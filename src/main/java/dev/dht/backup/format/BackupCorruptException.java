package dev.dht.backup.format;

/**
 * A backup file or manifest that cannot be read as written: a checksum mismatch, a truncation, an unknown format
 * version or a malformed field. The message names the file and, for a member file, the block (numbered from 0).
 */
public final class BackupCorruptException extends RuntimeException {

    /** A failure described by {@code message} (which names file and block). */
    public BackupCorruptException(String message) {
        super(message);
    }

    /** A failure described by {@code message}, caused by {@code cause}. */
    public BackupCorruptException(String message, Throwable cause) {
        super(message, cause);
    }
}
