package dev.dht.config;

import dev.dht.backup.BackupCatalog;
import dev.dht.backup.BackupCoordinator;
import dev.dht.backup.BackupEndpoint;
import dev.dht.backup.BackupsEndpoint;
import dev.dht.backup.InternalBackupHandler;
import dev.dht.backup.MemberBackup;
import dev.dht.backup.UnconfiguredLocation;
import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.location.BackupLocation;
import dev.dht.backup.location.BackupLocations;
import dev.dht.backup.location.S3BackupLocation;
import dev.dht.cluster.Membership;
import dev.dht.metrics.BackupMetrics;
import dev.dht.node.ThreadPriority;
import dev.dht.peer.PeerClient;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Wires cluster backups ({@code dht.backup.*}): the location, this node's part ({@link MemberBackup}), the
 * coordinator, the catalog and the actuator endpoints {@code backup} and {@code backups}. Blocking backup work (the
 * member file writes, manifest I/O) runs on the {@code dht-backup} scheduler, never on an event loop or a storage
 * thread.
 */
@Configuration(proxyBeanMethods = false)
public class BackupConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(BackupConfiguration.class);

    /**
     * Threads for the blocking work of backups: a member's part holds one for its whole scan, and encodes,
     * compresses, checksums and writes its files there, at nice {@code dht.backup.nice}.
     */
    @Bean(destroyMethod = "dispose")
    @Qualifier("backup")
    Scheduler backupScheduler(DhtProperties properties) {
        return Schedulers.newBoundedElastic(4, 64, ThreadPriority.threadFactory("dht-backup", properties.backup().nice()),
                60);
    }

    /** {@code dht.backup.location}: a directory, an S3 bucket, or none (backups refused). */
    @Bean(destroyMethod = "")
    BackupLocation backupLocation(DhtProperties properties) {
        DhtProperties.Backup backup = properties.backup();
        String location = backup.location();
        if (location.isEmpty()) {
            return new UnconfiguredLocation();
        }
        // a file closes once it holds file-size, after a last block of at most the largest value and two targets
        long largestFile = backup.fileSize().toBytes() + BackupFileFormat.MAX_VALUE_BYTES
                + 2L * BackupFileFormat.BLOCK_TARGET_BYTES;
        return BackupLocations.of(location, new S3BackupLocation.S3Options(backup.s3Endpoint(), backup.s3Region(),
                backup.s3PathStyle(), backup.s3().encryption(), backup.s3().uploadMemory().toBytes(), largestFile));
    }

    @Bean
    BackupMetrics backupMetrics(MeterRegistry registry) {
        return new BackupMetrics(registry);
    }

    @Bean
    MemberBackup memberBackup(DhtProperties properties, LocalStore store, BackupLocation location,
                              Membership membership, @Qualifier("backup") Scheduler scheduler, BackupMetrics metrics) {
        return new MemberBackup(store, location, membership.self(), properties.backup().rate().toBytes(),
                properties.backup().fileSize().toBytes(), scheduler, metrics);
    }

    /** The serving side of {@code POST /internal/backup}: writes this node's part of a backup. */
    @Bean
    InternalBackupHandler internalBackupHandler(MemberBackup memberBackup) {
        return new InternalBackupHandler(memberBackup);
    }

    /**
     * A part running here is cut as soon as the node begins to stop, while it still answers: the coordinator gets
     * a 503 and tries the part again once the node is back, instead of taking a part that kept writing through a
     * shutdown (see {@link MemberBackup#close}).
     */
    @Bean
    ServingLifecycle backupLifecycle(MemberBackup memberBackup) {
        return new ServingLifecycle(() -> { }, memberBackup::close);
    }

    /**
     * The catalog; on start, in the background, {@code dht.backup.last.success.time} is set from the newest
     * completed backup at the location, so a restarted node does not report "never".
     */
    @Bean
    BackupCatalog backupCatalog(DhtProperties properties, BackupLocation location, BackupMetrics metrics,
                                @Qualifier("backup") Scheduler scheduler) {
        BackupCatalog catalog = new BackupCatalog(location, properties.backup().keep());
        if (!properties.backup().location().isEmpty()) {
            Mono.fromRunnable(() -> catalog.list().stream()
                            .filter(manifest -> BackupManifest.DONE.equals(manifest.state()) && manifest.endedAt() != null)
                            .findFirst()
                            .ifPresent(newest -> metrics.succeeded(Instant.parse(newest.endedAt()).getEpochSecond())))
                    .subscribeOn(scheduler)
                    .subscribe(null, e -> LOG.warn("cannot list the backups at {}: {}", location.describe(), e.toString()));
        }
        return catalog;
    }

    @Bean
    BackupCoordinator backupCoordinator(DhtProperties properties, Membership membership, MemberBackup local, PeerClient peers,
                                        BackupCatalog catalog, @Qualifier("backup") Scheduler scheduler,
                                        BackupMetrics metrics) {
        return new BackupCoordinator(membership, local, peers, catalog, scheduler, metrics, Clock.systemUTC(),
                properties.backup().retryWindow(), properties.backup().incrementalMargin(),
                properties.tombstone().gcGrace());
    }

    @Bean
    BackupEndpoint backupEndpoint(BackupCoordinator coordinator) {
        return new BackupEndpoint(coordinator);
    }

    @Bean
    BackupsEndpoint backupsEndpoint(BackupCatalog catalog, BackupCoordinator coordinator,
                                    @Qualifier("backup") Scheduler scheduler) {
        return new BackupsEndpoint(catalog, coordinator, scheduler);
    }
}
