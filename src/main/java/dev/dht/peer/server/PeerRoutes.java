package dev.dht.peer.server;

import dev.dht.cluster.EpochFence;
import dev.dht.cluster.Membership;
import dev.dht.http.RequestBodyReader;
import dev.dht.node.RebuildGate;
import dev.dht.peer.PeerEndpoint;
import dev.dht.repair.RepairScan;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The server side of the node-to-node protocol: a route for each {@link PeerEndpoint} (the method and path of the
 * table), behind the cluster secret.
 */
public final class PeerRoutes {

    private PeerRoutes() {
    }

    /**
     * @param maxValueBytes {@code dht.max-value-size}, bytes: a record body may be this plus its header
     * @param clusterSecret {@code dht.cluster-secret}: requests without it get 403 ({@link ClusterSecretFilter})
     * @param cluster       the membership endpoints
     * @param membership    this node's view: its cluster id, which every request must name if it names one
     *                      ({@link ClusterIdFilter}: 403 otherwise, before any other filter)
     * @param epochs        brings this node's view up to a sender's newer epoch before a request is served
     * @param fence         refuses record calls placed under a view whose replica sets this node left behind
     * @param backup        this node's part of cluster backups
     * @param node          this node's figures for the operator's status
     */
    public static RouterFunction<ServerResponse> routes(LocalStore store, RebuildGate rebuild, RepairScan repairScan,
                                                        Membership membership, InternalClusterHandler cluster,
                                                        ClusterEpochFilter epochs, EpochFence fence,
                                                        InternalBackupHandler backup, InternalNodeHandler node,
                                                        int maxValueBytes, String clusterSecret) {
        int maxRecord = maxValueBytes + Record.MAX_HEADER_BYTES;
        InternalRecordHandler records = new InternalRecordHandler(store, rebuild, fence,
                new RequestBodyReader(maxRecord));
        InternalRepairHandler repair = new InternalRepairHandler(repairScan, membership);
        return RouterFunctions.route()
                .route(on(PeerEndpoint.VIEW), cluster::view)
                .route(on(PeerEndpoint.PROPOSE_VIEW), cluster::propose)
                .route(on(PeerEndpoint.STREAM), cluster::stream)
                .route(on(PeerEndpoint.PULL), cluster::pull)
                .route(on(PeerEndpoint.CLEANUP), cluster::cleanup)
                .route(on(PeerEndpoint.REPAIR_TREE), repair::tree)
                .route(on(PeerEndpoint.REPAIR_RECORDS), repair::records)
                .route(on(PeerEndpoint.READ), records::read)
                .route(on(PeerEndpoint.WRITE), records::write)
                .route(on(PeerEndpoint.WRITE_BATCH), records::writeBatch)
                .route(on(PeerEndpoint.READ_BATCH), records::readBatch)
                .route(on(PeerEndpoint.RANGE), records::range)
                .route(on(PeerEndpoint.BACKUP), backup::backup)
                .route(on(PeerEndpoint.STATS), node::stats)
                .filter(new ClusterIdFilter(membership::cluster))
                .filter(epochs)
                .filter(new ClusterSecretFilter(clusterSecret))
                .build();
    }

    /** Requests to {@code endpoint}: its method and path, as the table gives them. */
    private static RequestPredicate on(PeerEndpoint endpoint) {
        return RequestPredicates.method(endpoint.method()).and(RequestPredicates.path(endpoint.path()));
    }
}
