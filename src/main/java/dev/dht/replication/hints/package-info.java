/**
 * Hinted handoff: writes a down replica missed are kept durably on the coordinator and replayed when it answers
 * again.
 */
package dev.dht.replication.hints;
