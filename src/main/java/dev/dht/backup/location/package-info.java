/**
 * Where backups are kept: a directory ({@code file:}) or an S3 bucket ({@code s3://}), behind one interface of
 * streams. Every method blocks on disk or network I/O.
 */
package dev.dht.backup.location;
