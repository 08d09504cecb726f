package dev.dht.backup.format;

import com.github.luben.zstd.Zstd;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/**
 * Writes one member file ({@link BackupFileFormat}) to a stream, block by block: memory is one block (about
 * {@link BackupFileFormat#BLOCK_TARGET_BYTES} raw and its compressed copy), whatever the file's size. Records must
 * come in strictly increasing key order. Counts the bytes written and hashes them (SHA-256) for the manifest.
 *
 * <p>Blocking: writes to the stream it was given; call it from a thread that may block (never an event loop).
 * Not thread-safe. {@link #finish()} writes the trailer and closes the stream; {@link #close()} without it closes the
 * stream and leaves the file without a trailer, which a reader refuses as truncated.
 */
public final class BackupFileWriter implements Closeable {
    private final String name;
    private final DigestOutputStream digest;
    private final CountingStream counted;
    private final DataOutputStream out;
    private ByteArrayOutputStream block = newBlock();
    private DataOutputStream entries = new DataOutputStream(block);
    private byte[] lastKey;
    private long records;
    private long blocks;
    private FileSummary summary;

    /**
     * What a finished file holds, for the manifest.
     *
     * @param name    the file's name within the backup
     * @param records records in the file
     * @param bytes   the file's length in bytes
     * @param sha256  SHA-256 of the whole file, lower-case hex
     */
    public record FileSummary(String name, long records, long bytes, String sha256) {
    }

    /**
     * A writer of the file {@code name} (used in messages and the summary) to {@code stream}; writes the header.
     *
     * @throws IOException if the stream fails
     */
    public BackupFileWriter(String name, OutputStream stream) throws IOException {
        this.name = name;
        this.counted = new CountingStream(stream);
        this.digest = new DigestOutputStream(counted, sha256());
        this.out = new DataOutputStream(digest);
        out.write(BackupFileFormat.MAGIC);
        out.writeShort(BackupFileFormat.VERSION);
        out.writeByte(BackupFileFormat.CODEC_ZSTD);
        out.writeByte(0);
    }

    /**
     * Appends {@code entry}; a block is compressed and written once it holds
     * {@link BackupFileFormat#BLOCK_TARGET_BYTES}.
     *
     * @throws IllegalArgumentException if the key does not follow the previous one in unsigned byte order, or the
     *                                  value is over {@link BackupFileFormat#MAX_VALUE_BYTES} (a reader would refuse
     *                                  its block)
     * @throws IOException              if the stream fails
     */
    public void write(KeyedRecord entry) throws IOException {
        byte[] key = entry.key();
        if (lastKey != null && Arrays.compareUnsigned(lastKey, key) >= 0) {
            throw new IllegalArgumentException(name + ": keys must be written in increasing order");
        }
        if (entry.record().value().length > BackupFileFormat.MAX_VALUE_BYTES
                || key.length > BackupFileFormat.MAX_KEY_BYTES) {
            throw new IllegalArgumentException(name + ": a value of " + entry.record().value().length
                    + " bytes or key of " + key.length + " bytes is over a backup's limit of "
                    + BackupFileFormat.MAX_VALUE_BYTES + " and " + BackupFileFormat.MAX_KEY_BYTES);
        }
        lastKey = key;
        Record record = entry.record();
        entries.writeInt(key.length);
        entries.write(key);
        entries.writeLong(record.timestamp());
        entries.writeByte(record.isTombstone() ? BackupFileFormat.FLAG_TOMBSTONE : 0);
        entries.writeByte(record.from());
        entries.writeLong(record.expiresAtMillis());
        entries.writeInt(record.value().length);
        entries.write(record.value());
        records++;
        if (block.size() >= BackupFileFormat.BLOCK_TARGET_BYTES) {
            flushBlock();
        }
    }

    private void flushBlock() throws IOException {
        if (block.size() == 0) {
            return;
        }
        byte[] raw = block.toByteArray();
        if (block.size() > 2 * BackupFileFormat.BLOCK_TARGET_BYTES) {
            // a large value grew the buffer: let it go rather than hold its size for the rest of the file
            block = newBlock();
            entries = new DataOutputStream(block);
        } else {
            block.reset();
        }
        byte[] stored = Zstd.compress(raw, BackupFileFormat.ZSTD_LEVEL);
        ByteBuffer lengths = ByteBuffer.allocate(8).putInt(raw.length).putInt(stored.length);
        CRC32C crc = new CRC32C();
        crc.update(lengths.array());
        crc.update(stored);
        out.write(lengths.array());
        out.writeInt((int) crc.getValue());
        out.write(stored);
        blocks++;
    }

    private static ByteArrayOutputStream newBlock() {
        return new ByteArrayOutputStream(BackupFileFormat.BLOCK_TARGET_BYTES + 4096);
    }

    /** Bytes written to the stream so far (the last block not yet compressed is not counted). */
    public long bytesWritten() {
        return counted.count;
    }

    /** Records written so far. */
    public long records() {
        return records;
    }

    /**
     * Writes the last block and the trailer, closes the stream and returns what the file holds; idempotent.
     *
     * @throws IOException if the stream fails (the file is then incomplete: a reader refuses it)
     */
    public FileSummary finish() throws IOException {
        if (summary == null) {
            flushBlock();
            ByteBuffer trailer = ByteBuffer.allocate(4 + 16).putInt(0).putLong(records).putLong(blocks);
            CRC32C crc = new CRC32C();
            crc.update(trailer.array());
            out.write(trailer.array());
            out.writeInt((int) crc.getValue());
            out.flush();
            out.close();
            summary = new FileSummary(name, records, counted.count, HexFormat.of().formatHex(digest.getMessageDigest().digest()));
        }
        return summary;
    }

    /** Closes the stream; without {@link #finish()} first the file is left incomplete. */
    @Override
    public void close() throws IOException {
        if (summary == null) {
            out.close();
        }
    }

    /** A SHA-256 digest: the one that names a member file's content in the manifest. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Counts the bytes that pass to the underlying stream. */
    private static final class CountingStream extends FilterOutputStream {
        private long count;

        CountingStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count += len;
        }
    }
}
