package dev.dht.config;

import dev.dht.node.HybridLogicalClock;
import dev.dht.node.NodeHeartbeat;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The node clock and its heartbeat file, from {@link DhtProperties}. */
@Configuration(proxyBeanMethods = false)
public class NodeClockConfiguration {
    /**
     * The heartbeat file of {@code dht.data-dir}: refuses to start a node down longer than the tombstone GC grace,
     * and persists the clock's high-water mark (see {@link NodeHeartbeat}). The node counts as up from when it is
     * ready to serve. The node's wall clock is the system UTC clock; a test may register a {@link Clock} bean
     * instead (InProcessCluster does, to skew one node's clock); it is no setting.
     */
    @Bean(destroyMethod = "close")
    NodeHeartbeat nodeHeartbeat(DhtProperties properties, ObjectProvider<Clock> wallClock) {
        try {
            return NodeHeartbeat.open(properties.dataDir(), properties.tombstone().gcGrace(), properties.rebuild(),
                    wallClock.getIfAvailable(Clock::systemUTC));
        } catch (NodeHeartbeat.DownTooLongException e) {
            throw new InvalidSettingException("dht.rebuild", e.getMessage());
        }
    }

    @Bean
    ApplicationListener<ApplicationReadyEvent> nodeHeartbeatStarter(NodeHeartbeat heartbeat) {
        return event -> heartbeat.start();
    }

    @Bean
    HybridLogicalClock hybridLogicalClock(NodeHeartbeat heartbeat) {
        return heartbeat.clock();
    }
}
