/**
 * Rate pacing of background work ({@link dev.dht.pacing.Pacer}): streaming, cleanup, repair, tombstone collection,
 * hint replay, backup and restore each pace their stream with one. A leaf: it depends on no other package here.
 */
package dev.dht.pacing;
