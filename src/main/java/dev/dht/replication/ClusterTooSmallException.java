package dev.dht.replication;

/**
 * A request's {@code from} exceeds the replicas the cluster can give it ({@link dev.dht.cluster.Placement#size()}):
 * 400 with this message ("from F exceeds the cluster size N"), also when the cluster shrank between the request's
 * check and its coordination (a member removed or leaving in between), which the coordinator checks again under the
 * view it places the request with.
 */
public final class ClusterTooSmallException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** @param from the replicas asked; @param clusterSize the replicas the view can give */
    public ClusterTooSmallException(int from, int clusterSize) {
        super("from " + from + " exceeds the cluster size " + clusterSize);
    }
}
