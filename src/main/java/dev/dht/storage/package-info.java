/**
 * The local store: {@link dev.dht.storage.Record} and its binary layout, the LevelDB repository chain, the storage
 * threads that run every disk operation off the event loops, free-space reserve and tombstone collection.
 */
package dev.dht.storage;
