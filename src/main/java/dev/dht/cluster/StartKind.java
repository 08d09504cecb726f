package dev.dht.cluster;

/**
 * How a node starts, by what its data dir holds and what the seeds answer (decided once, before it serves).
 */
public enum StartKind {
    /** Its data dir holds a view: it goes on from there (the view log brings it up to date). */
    STORED,
    /**
     * A founding member of a new cluster ({@code dht.nodes} lists it) on an empty data dir, and no seed holds a
     * view: it waits for the view log's first leader to form the cluster, never forming one alone. If the view it
     * then receives is not the first one (the cluster ran without it), it lost its data and rebuilds.
     */
    FORMING,
    /**
     * A member of the running cluster on an empty data dir (a lost disk or volume): it streams the records it
     * replicates from the other replicas before it serves reads (Cassandra's replace, ScyllaDB's repair-based
     * node operations).
     */
    LOST_DATA,
    /** No member of the running cluster, on an empty data dir: it joins through the seeds. */
    JOINING
}
