package dev.dht.config;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/**
 * Binds {@link DhtProperties}, {@link AdmissionProperties}, {@link ReplicaClientProperties} (all from the prefix
 * {@code dht}) and {@link RebuildProperties} ({@code dht.rebuild}). The node's wiring is split by feature:
 * {@link NodeClockConfiguration}, {@link StorageConfiguration}, {@link PeerTransportConfiguration},
 * {@link ReplicationConfiguration}, {@link RepairConfiguration}, {@link AdmissionConfiguration},
 * {@link TlsConfiguration}, {@link WebConfiguration} and those of the cluster view and membership changes.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({DhtProperties.class, AdmissionProperties.class, ReplicaClientProperties.class,
        RebuildProperties.class})
public class DhtConfiguration {
}
