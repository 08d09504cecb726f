/**
 * The node-to-node protocol as its callers see it: its endpoints ({@link dev.dht.peer.PeerEndpoint}) and wire
 * constants ({@link dev.dht.peer.InternalProtocol}), the one client every call to a peer goes through
 * ({@link dev.dht.peer.PeerClient}: secret, timeouts, failure mapping, timing), and the binary codecs of records,
 * batches and range streams.
 */
package dev.dht.peer;
