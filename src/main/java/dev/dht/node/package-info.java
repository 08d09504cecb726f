/**
 * This node's lifecycle: its heartbeat file (down too long, clock high-water mark), its hybrid logical clock,
 * files replaced atomically, and the gate that keeps replica reads away while the node rebuilds.
 */
package dev.dht.node;
