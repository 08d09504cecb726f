package dev.dht.config;

import dev.dht.metrics.StorageMetrics;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.FreeSpaceReserveRepository;
import dev.dht.storage.LevelDbBackgroundThread;
import dev.dht.storage.LevelDbRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.RecordRepository;
import dev.dht.storage.RowCachedRecordRepository;
import dev.dht.storage.StorageEngine;
import dev.dht.storage.StorageHealthIndicator;
import dev.dht.storage.StorageScheduler;
import dev.dht.storage.TombstoneCollector;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * This node's store (LevelDB behind the free-space reserve and the row cache, on the storage threads), its health
 * contributor and tombstone collection, from {@link DhtProperties}.
 */
@Configuration(proxyBeanMethods = false)
public class StorageConfiguration {
    /** Purges tombstones and expired values older than {@code dht.tombstone.gc-grace} every {@code gc-interval}. */
    @Bean(destroyMethod = "close")
    TombstoneCollector tombstoneCollector(DhtProperties properties, LocalStore store, MeterRegistry registry) {
        DhtProperties.Tombstone settings = properties.tombstone();
        TombstoneCollector collector = new TombstoneCollector(store.repository(), store.clock(), settings.gcGrace(),
                settings.gcRate(), registry);
        if (!settings.gcInterval().isZero()) {
            collector.start(settings.gcInterval());
        }
        return collector;
    }

    /** This node's store; closed on shutdown after in-flight requests finished (storage queue first, then LevelDB). */
    @Bean
    LocalStore localStore(DhtProperties properties, HybridLogicalClock clock, FreeSpaceReserve reserve,
                          MeterRegistry registry) {
        DhtProperties.Storage settings = properties.storage();
        RecordRepository repository = new FreeSpaceReserveRepository(
                LevelDbRecordRepository.open(properties.dataDir(), settings.engine(), settings.sync(),
                        (int) settings.writeBufferSize().toBytes()), reserve);
        if (settings.engine() == StorageEngine.JNI && settings.compactionNice() > 0) {
            LevelDbBackgroundThread.lowerPriority(settings.compactionNice());
        }
        if (settings.rowCacheSize().toBytes() > 0) {
            RowCachedRecordRepository cached = new RowCachedRecordRepository(repository, settings.rowCacheSize().toBytes());
            CaffeineCacheMetrics.monitor(registry, cached.rows(), "dht.row.cache");
            repository = cached;
        }
        StorageScheduler scheduler = new StorageScheduler(settings.threads(), settings.queueCapacity(), "storage");
        StorageMetrics metrics = new StorageMetrics(registry);
        LocalStore store = new LocalStore(repository, scheduler, clock, metrics);
        metrics.bind(store.repository()::sizeOnDiskBytes, scheduler::queueDepth, scheduler::rejections, registry);
        return store;
    }

    /** {@code dht.storage.min-free-space} on the data dir: records and hints are written only while it is kept. */
    @Bean
    FreeSpaceReserve freeSpaceReserve(DhtProperties properties) {
        return FreeSpaceReserve.of(properties.dataDir(), properties.storage().minFreeSpace().toBytes());
    }

    /** Actuator health contributor {@code leveldb} (also part of the readiness group). */
    @Bean
    StorageHealthIndicator leveldbHealthIndicator(LocalStore store) {
        return new StorageHealthIndicator(store);
    }
}
