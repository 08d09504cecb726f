package dev.dht.backup.format;

/**
 * The constants of a backup member file, version {@value #VERSION}; docs/backup.md describes the layout:
 * <pre>
 * file    := header block* trailer
 * header  := magic "DHTB" | uint16 version | uint8 codec (1 = zstd) | uint8 0
 * block   := uint32 rawLength (&gt; 0) | uint32 storedLength | uint32 crc32c | stored bytes
 *            (crc32c over both lengths and the stored bytes; stored = the zstd frame of rawLength bytes of entries)
 * trailer := uint32 0 | uint64 records | uint64 blocks | uint32 crc32c of the 20 bytes before it
 * entry   := uint32 keyLength | key | int64 timestamp | uint8 flags (bit 0 tombstone) | uint8 from
 *            | int64 expiresAtMillis (0 = never) | uint32 valueLength | value
 * </pre>
 * Integers are big-endian. Keys are strictly increasing (unsigned byte order) within a file.
 */
public final class BackupFileFormat {
    /** The first four bytes of every member file. */
    static final byte[] MAGIC = {'D', 'H', 'T', 'B'};
    /** The one format version this code writes and reads. */
    public static final int VERSION = 1;
    /** Codec id of Zstandard. */
    static final int CODEC_ZSTD = 1;
    /** Header bytes: magic, version, codec, reserved. */
    static final int HEADER_BYTES = 8;
    /** Bytes before a block's stored bytes: two lengths and the checksum. */
    static final int BLOCK_HEADER_BYTES = 12;
    /** Trailer bytes after the end marker: records, blocks and the trailer's checksum. */
    static final int TRAILER_BYTES = 20;
    /** Uncompressed bytes a writer gathers before it closes a block (a single larger entry makes a larger one). */
    public static final int BLOCK_TARGET_BYTES = 1 << 20;
    /**
     * Largest value a member file holds, 64 MiB: {@code dht.max-value-size} may not be set above it, so that every
     * value a node accepts backs up and restores; a writer refuses a larger one.
     */
    public static final int MAX_VALUE_BYTES = 64 << 20;
    /** Largest key a writer accepts (keys come from a URL's query, far shorter). */
    static final int MAX_KEY_BYTES = 1 << 16;
    /**
     * Largest block a reader accepts, raw or stored: a block closes once it holds {@link #BLOCK_TARGET_BYTES}, so it
     * holds less than that plus one entry of the largest key and value; stored, Zstandard adds at most 1/255 to
     * incompressible bytes, within the second target's margin. A corrupt length must not make a reader allocate
     * without bound.
     */
    static final int MAX_BLOCK_BYTES = MAX_VALUE_BYTES + 2 * BLOCK_TARGET_BYTES;
    /** Bytes of an entry besides its key and value. */
    public static final int ENTRY_OVERHEAD_BYTES = 4 + 8 + 1 + 1 + 8 + 4;
    /** Flag bit of a tombstone. */
    static final int FLAG_TOMBSTONE = 0x01;
    /** Zstandard level: 3 (its default), fast enough to keep up with a paced scan on one core. */
    static final int ZSTD_LEVEL = 3;

    /** The file-name extension of member files. */
    public static final String EXTENSION = ".dhtb";

    private BackupFileFormat() {
    }
}
