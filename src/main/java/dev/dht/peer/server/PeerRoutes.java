package dev.dht.peer.server;

import dev.dht.cluster.ClusterTopology;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.repair.RepairScan;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.web.RequestBodyReader;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The server side of the node-to-node protocol ({@link InternalProtocol}): routes behind the cluster secret. */
public final class PeerRoutes {

    private PeerRoutes() {
    }

    /**
     * @param maxValueBytes {@code dht.max-value-size}, bytes: a record body may be this plus its header
     * @param clusterSecret {@code dht.cluster-secret}: requests without it get 403 ({@link ClusterSecretFilter})
     */
    public static RouterFunction<ServerResponse> routes(LocalStore store, RebuildGate rebuild, RepairScan repairScan,
                                                        ClusterTopology topology, int maxValueBytes,
                                                        String clusterSecret) {
        int maxRecord = maxValueBytes + Record.MAX_HEADER_BYTES;
        InternalRecordHandler records = new InternalRecordHandler(store, rebuild, new RequestBodyReader(maxRecord));
        InternalRepairHandler repair = new InternalRepairHandler(repairScan, topology);
        return RouterFunctions.route()
                .GET(InternalProtocol.REPAIR_TREE_PATH, repair::tree)
                .GET(InternalProtocol.REPAIR_RECORDS_PATH, repair::records)
                .GET(InternalProtocol.RECORD_PATH, records::read)
                .PUT(InternalProtocol.RECORD_PATH, records::write)
                .POST(InternalProtocol.RECORDS_PATH, records::writeBatch)
                .POST(InternalProtocol.READS_PATH, records::readBatch)
                .GET(InternalProtocol.RANGE_PATH, records::range)
                .filter(new ClusterSecretFilter(clusterSecret))
                .build();
    }
}
