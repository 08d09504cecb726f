package dev.dht.storage;

import java.util.concurrent.RejectedExecutionException;

/**
 * A write refused because the data dir's file system has less usable space than {@code dht.storage.min-free-space}
 * ({@link FreeSpaceReserveRepository}). It is a {@link RejectedExecutionException}, as a full storage queue is:
 * nothing was written, and it is answered 503 with {@code Retry-After} (also when it reaches the client through a
 * quorum, and on a peer's internal endpoint, which its coordinator counts as a refusing replica).
 */
public final class StorageFullException extends RejectedExecutionException {
    /** @param usableBytes usable space left, bytes; {@code reserveBytes} the configured reserve, bytes */
    public StorageFullException(long usableBytes, long reserveBytes) {
        super("storage full: " + usableBytes + " bytes usable, below the reserve of " + reserveBytes
                + " bytes (dht.storage.min-free-space); writes resume when space is freed");
    }
}
