/**
 * The server side of the node-to-node protocol: the {@code /internal/*} handlers, their routes and the filter that
 * refuses requests without the cluster secret (403).
 */
package dev.dht.peer.server;
