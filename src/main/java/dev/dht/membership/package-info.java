/**
 * Membership changes while the cluster serves: a node joins, a node is decommissioned, a dead node is removed
 * (docs/membership.md). {@link dev.dht.membership.ViewExchange} spreads cluster views between nodes (proposals, and
 * catching up with a peer's newer epoch); {@link dev.dht.membership.ChangeProcedure} drives one change through its
 * phases; {@link dev.dht.membership.RecordStreaming} moves the records a node gains;
 * {@link dev.dht.membership.OwnershipCleanup} drops those it no longer replicates; {@link
 * dev.dht.membership.ClusterEndpoint} is the operator's door ({@code /actuator/cluster}).
 */
package dev.dht.membership;
