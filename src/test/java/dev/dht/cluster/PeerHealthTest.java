package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A peer going down or coming back is logged once per change of state, not once per request. */
class PeerHealthTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger(PeerHealth.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final Node peer = new Node(URI.create("http://dht-1.dht:8080"), false);

    @BeforeEach
    void captureLogs() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
    }

    @Test
    void eachChangeOfStateIsLoggedOnce() {
        PeerHealth health = new PeerHealth();
        health.succeeded(peer);
        for (int i = 0; i < 5; i++) {
            health.failed(peer, new ConnectException("Connection refused"));
        }
        assertThat(health.isUp(peer)).isFalse();
        for (int i = 0; i < 5; i++) {
            health.succeeded(peer);
        }
        assertThat(health.isUp(peer)).isTrue();
        health.failed(peer, new ConnectException("Connection refused"));

        List<String> lines = logged.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
        assertThat(lines).containsExactly(
                "WARN peer dht-1.dht:8080 is DOWN: java.net.ConnectException: Connection refused",
                "INFO peer dht-1.dht:8080 is UP again",
                "WARN peer dht-1.dht:8080 is DOWN: java.net.ConnectException: Connection refused");
        assertThat(logged.list).extracting(ILoggingEvent::getLevel).doesNotContain(Level.ERROR);
    }

    @Test
    void thePeerUpGaugeFollowsTheLastExchange() {
        PeerHealth health = new PeerHealth();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        health.bindGauges(List.of(peer), registry);
        assertThat(registry.get("dht.peer.up").tag("peer", "dht-1.dht:8080").gauge().value()).isEqualTo(1.0);
        health.failed(peer, new ConnectException("refused"));
        assertThat(registry.get("dht.peer.up").tag("peer", "dht-1.dht:8080").gauge().value()).isEqualTo(0.0);
    }

    @Test
    void downForCountsFromTheFirstFailureSinceThePeerWasUp() throws InterruptedException {
        PeerHealth health = new PeerHealth();
        assertThat(health.downFor(peer)).as("never seen down").isZero();
        health.failed(peer, new ConnectException("refused"));
        Thread.sleep(50);
        health.failed(peer, new ConnectException("refused"));
        assertThat(health.downFor(peer)).as("from the first failure, not the last").isGreaterThanOrEqualTo(Duration.ofMillis(50));
        health.succeeded(peer);
        assertThat(health.downFor(peer)).as("up again").isZero();
    }
}
