/**
 * The {@code restore} command: reads a backup's member files, merges their copies of each key by last write wins,
 * and writes every record with its original timestamp to the target cluster's replicas through the internal write
 * path, paced and resumable. Runs outside a node, on plain threads that may block.
 */
package dev.dht.backup.restore;
