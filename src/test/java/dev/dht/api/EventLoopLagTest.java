package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The event loop lag sees a loop that cannot run its tasks on time, and the admission filter refuses client
 * requests with 503 while it lasts. A loop is held busy by a task that waits on a latch (standing in for a
 * loop with more work than the CPU allows).
 */
class EventLoopLagTest {
    private final EventLoopGroup group = new DefaultEventLoopGroup(2);
    private final EventLoopLag lag = new EventLoopLag();
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void stop() {
        release.countDown();
        lag.stop();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void aBusyLoopShowsAsLagUntilItCatchesUp() throws InterruptedException {
        lag.start(group);
        Thread.sleep(100);
        assertThat(lag.nanos()).as("idle loops are on time").isLessThan(Duration.ofMillis(100).toNanos());

        group.next().execute(this::holdLoop);
        Thread.sleep(400);
        assertThat(lag.nanos()).as("one loop held for 400 ms").isGreaterThan(Duration.ofMillis(250).toNanos());

        release.countDown();
        Thread.sleep(200);
        assertThat(lag.nanos()).as("caught up again").isLessThan(Duration.ofMillis(100).toNanos());
    }

    @Test
    void clientRequestsGet503WhileTheLoopsLagAndInternalOnesPass() throws InterruptedException {
        lag.start(group);
        InFlightRequestLimit limit = new InFlightRequestLimit(100, lag, Duration.ofMillis(100));
        group.next().execute(this::holdLoop);
        Thread.sleep(400);

        MockServerWebExchange client = MockServerWebExchange.from(MockServerHttpRequest.put("/v0/entity?id=a"));
        MockServerWebExchange internal = MockServerWebExchange.from(MockServerHttpRequest.put("/internal/record?id=a"));
        limit.filter(client, exchange -> Mono.error(new AssertionError("must not be served"))).block();
        limit.filter(internal, exchange -> {
            exchange.getResponse().setStatusCode(HttpStatus.CREATED);
            return Mono.empty();
        }).block();

        assertThat(client.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(client.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(client.getResponse().getBodyAsString().block()).startsWith("overloaded: event loops").contains("ms behind");
        assertThat(internal.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);

        release.countDown();
        Thread.sleep(200);
        MockServerWebExchange later = MockServerWebExchange.from(MockServerHttpRequest.put("/v0/entity?id=b"));
        limit.filter(later, exchange -> {
            exchange.getResponse().setStatusCode(HttpStatus.CREATED);
            return Mono.empty();
        }).block();
        assertThat(later.getResponse().getStatusCode()).as("served again once the loops caught up").isEqualTo(HttpStatus.CREATED);
    }

    private void holdLoop() {
        try {
            release.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
