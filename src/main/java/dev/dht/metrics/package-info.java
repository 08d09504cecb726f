/**
 * Meters of the node (names under {@code dht.}) that take narrow inputs: a timer, a supplier, never a store.
 */
package dev.dht.metrics;
