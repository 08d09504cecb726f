package dev.dht.storage;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Actuator health of the LevelDB store (contributor name {@code leveldb}): UP while the store is open, with
 * its size on disk and storage queue depth as details; DOWN once closed. Cheap and non-blocking apart from a
 * directory listing for the size.
 */
public final class StorageHealthIndicator extends AbstractHealthIndicator {
    private final LocalStore store;

    public StorageHealthIndicator(LocalStore store) {
        super("LevelDB health check failed");
        this.store = store;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (store.repository().isOpen()) {
            builder.up();
        } else {
            builder.down();
        }
        builder.withDetail("sizeOnDiskBytes", store.repository().sizeOnDiskBytes())
                .withDetail("queueDepth", store.scheduler().queueDepth());
    }
}
