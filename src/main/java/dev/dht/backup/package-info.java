/**
 * Cluster backups while serving: the coordinator of a backup, each member's part written from a snapshot of its
 * store, the catalog of backups at the location, and their actuator endpoints. The format is in {@code format/},
 * the locations in {@code location/}, the restore command in {@code restore/}.
 */
package dev.dht.backup;
