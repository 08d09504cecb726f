package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

/** Admission control: requests beyond the limit get 503 with Retry-After at once; slots free up when requests end. */
class InFlightRequestLimitTest {
    /** An event loop lag that is never started reads 0: here only the in-flight limit acts. */
    private final InFlightRequestLimit limit = new InFlightRequestLimit(2, new EventLoopLag(), Duration.ofMillis(100));
    private final AtomicInteger served = new AtomicInteger();

    private MockServerWebExchange exchange(String path) {
        return MockServerWebExchange.from(MockServerHttpRequest.get(path));
    }

    private WebFilterChain chainUntil(Sinks.Empty<Void> done) {
        return exchange -> {
            served.incrementAndGet();
            return done.asMono();
        };
    }

    @Test
    void requestsBeyondTheLimitGet503UntilASlotFreesUp() {
        Sinks.Empty<Void> first = Sinks.empty();
        Sinks.Empty<Void> second = Sinks.empty();
        Disposable a = limit.filter(exchange("/v0/entity?id=a"), chainUntil(first)).subscribe();
        Disposable b = limit.filter(exchange("/v0/entity?id=b"), chainUntil(second)).subscribe();
        assertThat(limit.inFlight()).isEqualTo(2);

        MockServerWebExchange rejected = exchange("/v0/entity?id=c");
        limit.filter(rejected, chainUntil(Sinks.empty())).block();
        assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(rejected.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(rejected.getResponse().getBodyAsString().block()).startsWith("overloaded");
        assertThat(served).hasValue(2);

        first.tryEmitEmpty();
        b.dispose();
        assertThat(limit.inFlight()).as("completed and cancelled requests release their slots").isZero();
        MockServerWebExchange admitted = exchange("/v0/entity?id=d");
        limit.filter(admitted, chainUntil(completed())).block();
        assertThat(admitted.getResponse().getStatusCode()).isNotEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(served).hasValue(3);
        a.dispose();
    }

    @Test
    void internalAndActuatorRequestsAreNotLimited() {
        Sinks.Empty<Void> hold = Sinks.empty();
        limit.filter(exchange("/v0/entity?id=a"), chainUntil(hold)).subscribe();
        limit.filter(exchange("/v0/entity?id=b"), chainUntil(hold)).subscribe();
        for (String path : new String[] {"/internal/record?id=x", "/actuator/health"}) {
            MockServerWebExchange exchange = exchange(path);
            limit.filter(exchange, chainUntil(completed())).block();
            assertThat(exchange.getResponse().getStatusCode()).as(path).isNotEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        }
        assertThat(served).hasValue(4);
        hold.tryEmitEmpty();
    }

    private static Sinks.Empty<Void> completed() {
        Sinks.Empty<Void> sink = Sinks.empty();
        sink.tryEmitEmpty();
        return sink;
    }

    @Test
    void aLimitBelowOneIsRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new InFlightRequestLimit(0, new EventLoopLag(), Duration.ofMillis(100)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
