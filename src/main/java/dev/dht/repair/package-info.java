/**
 * Merkle-tree anti-entropy repair between pairs of replicas, and the rebuild of a node that starts empty.
 */
package dev.dht.repair;
