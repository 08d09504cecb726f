package dev.dht.storage;

/**
 * A key (the UTF-8 bytes of an id) with the record stored under it, as produced by range scans.
 *
 * @param key    raw key bytes; do not modify
 * @param record the stored version (may be a tombstone)
 */
public record KeyedRecord(byte[] key, Record record) {
}
