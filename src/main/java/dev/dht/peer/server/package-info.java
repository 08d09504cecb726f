/**
 * The server side of the node-to-node protocol, without the features: the routing of each {@code /internal/*}
 * endpoint to the handler a feature registers ({@link dev.dht.peer.server.PeerEndpointHandler}; the handlers live
 * with their features, records and ranges in {@code replication}, trees in {@code repair}, backup parts in
 * {@code backup}, views and node figures in {@code membership}) and the guards of every internal route: the cluster
 * id (403), the epoch catch-up, the cluster secret or a verified client certificate (403).
 */
package dev.dht.peer.server;
