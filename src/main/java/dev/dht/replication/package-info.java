/**
 * Coordinating a client request: placing it on replicas, sending it to them and waiting for the first {@code ack}
 * answers (quorum), reconciling them by last-write-wins and read repair; the local and remote replicas.
 */
package dev.dht.replication;
