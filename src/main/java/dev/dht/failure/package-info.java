/**
 * The failure vocabulary every layer shares: a refusal for want of capacity ({@link
 * dev.dht.failure.OverloadedException}, 503) with its {@link dev.dht.failure.OverloadReason}. Failures of one layer
 * only (a bad request, a quorum not reached) live with that layer.
 */
package dev.dht.failure;
