package dev.dht.repair;

import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import reactor.core.publisher.Mono;

/**
 * Actuator endpoint {@code repair}: {@code POST /actuator/repair} repairs this node with every peer now and
 * answers, once all are done, one {@link RepairResult} per peer (a failed one with its error). Non-blocking.
 */
@Endpoint(id = "repair")
public class RepairEndpoint {
    private final AntiEntropyRepair repair;

    /** The endpoint over {@code repair}. */
    public RepairEndpoint(AntiEntropyRepair repair) {
        this.repair = repair;
    }

    /** Runs one repair with every peer, one after another. */
    @WriteOperation
    public Mono<List<RepairResult>> repair() {
        return repair.repairAll();
    }
}
