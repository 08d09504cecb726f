/**
 * The node-to-node protocol as its callers see it: its endpoints ({@link dev.dht.peer.InternalProtocol}), the one
 * client that calls them, and the binary codecs of records, batches and range streams.
 */
package dev.dht.peer;
