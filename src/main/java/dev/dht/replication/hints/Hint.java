package dev.dht.replication.hints;

import dev.dht.storage.Record;

/**
 * A replica write that did not reach its peer, kept by the coordinator to be replayed later.
 *
 * @param peer     name of the peer the write was for ({@link dev.dht.cluster.Node#name()})
 * @param sequence order of the hint among the peer's hints: taken from the time it was stored, strictly
 *                 increasing on this node, so the lowest is the oldest
 * @param key      the record's key (the id's UTF-8 bytes)
 * @param record   the record as the coordinator sent it (timestamp, tombstone, from, expiry)
 */
public record Hint(String peer, long sequence, byte[] key, Record record) {
}
