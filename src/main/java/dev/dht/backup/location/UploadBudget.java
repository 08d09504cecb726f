package dev.dht.backup.location;

/**
 * The bytes of S3 parts in flight at once on a node, bounded ({@code dht.backup.s3.upload-memory}): a part waits
 * until it fits, but one part always may go, however large. Thread-safe; {@link #acquire} blocks.
 */
final class UploadBudget {
    private final long maxBytes;
    private long inFlight;
    private long mostInFlight;

    /** A budget of {@code maxBytes}. */
    UploadBudget(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** Waits until {@code bytes} more fit (or nothing is in flight), then counts them. */
    synchronized void acquire(long bytes) throws InterruptedException {
        while (inFlight > 0 && inFlight + bytes > maxBytes) {
            wait();
        }
        inFlight += bytes;
        mostInFlight = Math.max(mostInFlight, inFlight);
    }

    /** Counts {@code bytes} as uploaded. */
    synchronized void release(long bytes) {
        inFlight -= bytes;
        notifyAll();
    }

    /** The most bytes that were in flight at once. */
    synchronized long mostInFlight() {
        return mostInFlight;
    }
}
