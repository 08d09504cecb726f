package dev.dht.config;

import dev.dht.cluster.EpochFence;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.http.RequestBodyReader;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.node.RebuildGate;
import dev.dht.peer.PeerClient;
import dev.dht.replication.Coordinator;
import dev.dht.replication.InternalRecordHandler;
import dev.dht.replication.LocalReplica;
import dev.dht.replication.NewMemberReplicas;
import dev.dht.replication.RangeCoordinator;
import dev.dht.replication.RemoteReplica;
import dev.dht.replication.Replicas;
import dev.dht.replication.hints.HintStore;
import dev.dht.replication.hints.HintedHandoff;
import dev.dht.replication.hints.HintsOfRemovedPeers;
import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Replication: peers' health, hinted handoff, the replica of every member, the coordinators of point requests
 * and ranges, from {@link ReplicaClientProperties} and {@link DhtProperties}.
 */
@Configuration(proxyBeanMethods = false)
public class ReplicationConfiguration {
    /** Peers' health; Gauge {@code dht.peer.up} of a peer is registered with its replica ({@link #replicas}). */
    @Bean
    PeerHealth peerHealth() {
        return new PeerHealth();
    }

    /**
     * The replica side of the record and range endpoints: a single record's body may be {@code dht.max-value-size}
     * plus the record header; reads and writes are fenced by epoch.
     */
    @Bean
    InternalRecordHandler internalRecordHandler(AdmissionProperties admission, LocalStore store, RebuildGate rebuild,
                                                EpochFence fence) {
        int maxRecord = (int) admission.maxValueSize().toBytes() + Record.MAX_HEADER_BYTES;
        return new InternalRecordHandler(store, rebuild, fence, new RequestBodyReader(maxRecord));
    }

    /**
     * Hinted handoff, with its own LevelDB in {@code <dht.data-dir>/hints}, rid of the hints of peers no longer
     * members of the cluster view, at start and whenever a view is adopted; closed on shutdown (replay stops, hints
     * already offered are stored).
     */
    @Bean
    HintedHandoff hintedHandoff(DhtProperties properties, Membership membership, PeerHealth health,
                                FreeSpaceReserve reserve, MeterRegistry registry) {
        DhtProperties.Hints hints = properties.hints();
        HintStore store = HintStore.open(properties.dataDir().resolve("hints"), properties.storage().engine(),
                properties.storage().sync(), reserve);
        HintedHandoff handoff = new HintedHandoff(store, health, hints.enabled(), hints.window(),
                hints.maxSize().toBytes(), hints.replayRate(), membership, registry);
        if (membership.isMember()) { // a node yet to join has no view of its own to judge by
            handoff.dropHintsOfRemovedPeers(membership.placement().members());
        }
        membership.onChange(new HintsOfRemovedPeers(handoff));
        return handoff;
    }

    /**
     * The replica of each member of the cluster view, made at start and when a view adds a member: this node
     * in-process, a peer over the internal protocol with its failed writes kept as hints (replayed from then on,
     * {@link HintedHandoff#hinting}) and its Gauge {@code dht.peer.up}.
     */
    @Bean
    Replicas replicas(ReplicaClientProperties properties, Membership membership, LocalStore store, PeerClient peerClient,
                      PeerHealth health, ReplicaCallMetrics callMetrics, HintedHandoff hintedHandoff,
                      RebuildGate rebuildGate, MeterRegistry registry) {
        Replicas replicas = new Replicas(node -> {
            if (node.self()) {
                return new LocalReplica(store, rebuildGate);
            }
            health.bindGauges(List.of(node), registry);
            return hintedHandoff.hinting(node, new RemoteReplica(node, peerClient, health, callMetrics,
                    properties.effectiveWritesInFlight(), properties.effectiveReadsInFlight(), stallThreshold(properties)));
        });
        // every member's replica at once, as with every later view: its hints replay without waiting for a request
        replicas.of(membership.placement().members());
        membership.onChange(new NewMemberReplicas(replicas));
        return replicas;
    }

    /**
     * How long a peer may answer none of the calls outstanding to it before reads ask it last: the speculative
     * retry delay, or (with speculation off) the replica timeout.
     */
    private static Duration stallThreshold(ReplicaClientProperties properties) {
        Duration delay = properties.speculativeRetryDelay();
        return delay.isZero() ? properties.replicaTimeout() : delay;
    }

    @Bean
    Coordinator coordinator(ReplicaClientProperties properties, Membership membership, Replicas replicas, LocalStore store,
                            MeterRegistry registry) {
        return new Coordinator(membership, replicas, store.clock(), properties.replicaTimeout(),
                properties.speculativeRetryDelay(), registry);
    }

    /** Ranges read every member of the current view, joining and leaving ones too. */
    @Bean
    RangeCoordinator rangeCoordinator(Membership membership, Replicas replicas, LocalStore store) {
        return new RangeCoordinator(membership, placement -> replicas.of(placement.members()), store.clock());
    }
}
