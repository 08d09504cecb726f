/**
 * The portable backup format (docs/backup.md): member files of records in key order, in checksummed Zstandard
 * blocks, and the JSON manifest of a backup. Independent of the storage engine and of placement; no I/O of its own
 * beyond the streams it is given.
 */
package dev.dht.backup.format;
