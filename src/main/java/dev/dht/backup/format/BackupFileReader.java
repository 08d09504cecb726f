package dev.dht.backup.format;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.security.DigestInputStream;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.zip.CRC32C;

/**
 * Reads one member file ({@link BackupFileFormat}) as records in key order, verifying as it goes: the header's
 * magic and version (an unknown version is refused), each block's checksum and length, the entries' order, the
 * trailer's counts and, when the manifest's digest is given, the whole file's SHA-256 at its end. Memory is one
 * block. Any mismatch, and a file that ends early, fails with {@link BackupCorruptException} naming the file and
 * block; a failing stream with {@link UncheckedIOException}.
 *
 * <p>Blocking: reads the stream it was given. Not thread-safe. {@link #close()} closes the stream.
 */
public final class BackupFileReader implements Iterator<KeyedRecord>, Closeable {
    private final String name;
    private final DigestInputStream digest;
    private final DataInputStream in;
    private final String expectedSha256;
    private ByteBuffer entries = ByteBuffer.allocate(0);
    private long blocks;
    private long records;
    private byte[] lastKey;
    private boolean ended;
    private KeyedRecord next;

    /**
     * A reader of the file {@code name} (for messages) from {@code stream}; reads and checks the header.
     *
     * @param expectedSha256 the file's SHA-256 (lower-case hex) from the manifest, checked at the end; null: not
     *                       checked
     * @throws BackupCorruptException if the header is not a member file's or its version is unknown
     */
    public BackupFileReader(String name, InputStream stream, String expectedSha256) {
        this.name = name;
        this.digest = new DigestInputStream(stream, BackupFileWriter.sha256());
        this.in = new DataInputStream(digest);
        this.expectedSha256 = expectedSha256;
        byte[] header = new byte[BackupFileFormat.HEADER_BYTES];
        readFully(name + " header", header, 0, header.length);
        if (!Arrays.equals(Arrays.copyOf(header, 4), BackupFileFormat.MAGIC)) {
            throw new BackupCorruptException(name + ": not a backup file (no DHTB magic)");
        }
        int version = ((header[4] & 0xff) << 8) | (header[5] & 0xff);
        if (version != BackupFileFormat.VERSION) {
            throw new BackupCorruptException(name + ": format version " + version + " is unknown to this version"
                    + " (it reads version " + BackupFileFormat.VERSION + ")");
        }
        if (header[6] != BackupFileFormat.CODEC_ZSTD) {
            throw new BackupCorruptException(name + ": unknown codec " + header[6]);
        }
    }

    @Override
    public boolean hasNext() {
        if (next == null && !ended) {
            next = readEntry();
        }
        return next != null;
    }

    @Override
    public KeyedRecord next() {
        if (!hasNext()) {
            throw new NoSuchElementException(name + ": no more records");
        }
        KeyedRecord entry = next;
        next = null;
        return entry;
    }

    /** Records read so far. */
    public long records() {
        return records;
    }

    /** The next entry, reading the next block when this one is used up; null at the trailer. */
    private KeyedRecord readEntry() {
        while (!entries.hasRemaining()) {
            if (!readBlock()) {
                return null;
            }
        }
        String where = name + " block " + (blocks - 1);
        try {
            byte[] key = new byte[checkedLength(entries.getInt(), where)];
            entries.get(key);
            long timestamp = entries.getLong();
            int flags = entries.get() & 0xff;
            int from = entries.get() & 0xff;
            long expiresAt = entries.getLong();
            byte[] value = new byte[checkedLength(entries.getInt(), where)];
            entries.get(value);
            if ((flags & ~BackupFileFormat.FLAG_TOMBSTONE) != 0) {
                throw new BackupCorruptException(where + ": unknown flags 0x" + Integer.toHexString(flags));
            }
            if (lastKey != null && Arrays.compareUnsigned(lastKey, key) >= 0) {
                throw new BackupCorruptException(where + ": keys out of order");
            }
            lastKey = key;
            records++;
            boolean tombstone = (flags & BackupFileFormat.FLAG_TOMBSTONE) != 0;
            if (tombstone && value.length > 0) {
                throw new BackupCorruptException(where + ": a tombstone carries a value");
            }
            Record record = tombstone ? Record.tombstone(timestamp, from) : Record.value(timestamp, value, from, expiresAt);
            return new KeyedRecord(key, record);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new BackupCorruptException(where + ": malformed entry", e);
        }
    }

    private int checkedLength(int length, String where) {
        if (length < 0 || length > entries.remaining()) {
            throw new BackupCorruptException(where + ": entry length " + length + " beyond its block");
        }
        return length;
    }

    /** Reads and verifies the next block; false (after checking the trailer) at the end marker. */
    private boolean readBlock() {
        String where = name + " block " + blocks;
        byte[] lengths = new byte[8];
        readFully(where, lengths, 0, 4);
        int rawLength = ByteBuffer.wrap(lengths).getInt(0);
        if (rawLength == 0) {
            readTrailer(Arrays.copyOf(lengths, 4));
            return false;
        }
        readFully(where, lengths, 4, 4);
        int storedLength = ByteBuffer.wrap(lengths).getInt(4);
        if (rawLength < 0 || rawLength > BackupFileFormat.MAX_BLOCK_BYTES
                || storedLength <= 0 || storedLength > BackupFileFormat.MAX_BLOCK_BYTES) {
            throw new BackupCorruptException(where + ": implausible lengths " + rawLength + "/" + storedLength
                    + " (corrupt)");
        }
        byte[] checksum = new byte[4];
        readFully(where, checksum, 0, 4);
        byte[] stored = new byte[storedLength];
        readFully(where, stored, 0, storedLength);
        CRC32C crc = new CRC32C();
        crc.update(lengths);
        crc.update(stored);
        if ((int) crc.getValue() != ByteBuffer.wrap(checksum).getInt()) {
            throw new BackupCorruptException(where + ": checksum mismatch (corrupt)");
        }
        byte[] raw;
        try {
            raw = Zstd.decompress(stored, rawLength);
        } catch (ZstdException e) {
            throw new BackupCorruptException(where + ": cannot decompress: " + e.getMessage(), e);
        }
        if (raw.length != rawLength) {
            throw new BackupCorruptException(where + ": decompressed to " + raw.length + " bytes, not " + rawLength);
        }
        entries = ByteBuffer.wrap(raw);
        blocks++;
        return true;
    }

    private void readTrailer(byte[] marker) {
        String where = name + " trailer";
        byte[] rest = new byte[BackupFileFormat.TRAILER_BYTES];
        readFully(where, rest, 0, rest.length);
        ByteBuffer trailer = ByteBuffer.wrap(rest);
        long recordCount = trailer.getLong();
        long blockCount = trailer.getLong();
        CRC32C crc = new CRC32C();
        crc.update(marker);
        crc.update(rest, 0, 16);
        if ((int) crc.getValue() != trailer.getInt()) {
            throw new BackupCorruptException(where + ": checksum mismatch (corrupt)");
        }
        if (recordCount != records || blockCount != blocks) {
            throw new BackupCorruptException(where + ": says " + recordCount + " records in " + blockCount
                    + " blocks, read " + records + " in " + blocks);
        }
        try {
            if (in.read() != -1) {
                throw new BackupCorruptException(where + ": bytes after the trailer");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(name + ": " + e.getMessage(), e);
        }
        if (expectedSha256 != null) {
            String actual = HexFormat.of().formatHex(digest.getMessageDigest().digest());
            if (!actual.equalsIgnoreCase(expectedSha256)) {
                throw new BackupCorruptException(name + ": SHA-256 " + actual + " differs from the manifest's "
                        + expectedSha256);
            }
        }
        ended = true;
    }

    private void readFully(String where, byte[] into, int offset, int length) {
        try {
            in.readFully(into, offset, length);
        } catch (EOFException e) {
            throw new BackupCorruptException(where + ": file ends early (truncated)", e);
        } catch (IOException e) {
            throw new UncheckedIOException(where + ": " + e.getMessage(), e);
        }
    }

    /** Closes the stream. */
    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            throw new UncheckedIOException(name + ": " + e.getMessage(), e);
        }
    }
}
