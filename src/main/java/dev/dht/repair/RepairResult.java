package dev.dht.repair;

/**
 * The outcome of one repair with one peer (the actuator endpoint's answer, one per peer).
 *
 * @param peer             the peer's name (host:port)
 * @param rangesCompared   hash tree nodes compared on the way down from the root
 * @param segmentsDiffered leaf segments whose hashes differed
 * @param recordsCompared  keys of differing segments compared record by record (each side's record once)
 * @param pulled           records written to this node from the peer
 * @param pushed           records sent to the peer
 * @param millis           wall-clock duration in ms
 * @param treeMillis       ms until both hash trees were built (the two scans run at once, each paced by
 *                         {@code dht.repair.scan-rate}), part of {@code millis}
 * @param error            why the repair failed, or null if it completed
 */
public record RepairResult(String peer, long rangesCompared, long segmentsDiffered, long recordsCompared, long pulled,
                           long pushed, long millis, long treeMillis, String error) {

    /** A failed repair with {@code peer}. */
    static RepairResult failed(String peer, long millis, Throwable error) {
        return new RepairResult(peer, 0, 0, 0, 0, 0, millis, 0, String.valueOf(error.getMessage()));
    }

    /** True if the repair completed. */
    public boolean completed() {
        return error == null;
    }
}
