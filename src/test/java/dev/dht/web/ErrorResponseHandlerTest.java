package dev.dht.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.replication.ClusterTooSmallException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

/** What a client reads when a request fails: the status and one line of text, never a stack trace. */
class ErrorResponseHandlerTest {
    private final ErrorResponseHandler handler = new ErrorResponseHandler();

    @Test
    void aFromTheClusterShrankBelowIsABadRequest() {
        MockServerWebExchange exchange = handled(new ClusterTooSmallException(3, 2));

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
                .isEqualTo("from 3 exceeds the cluster size 2\n");
    }

    @Test
    void anUnclassifiedFailureIsAnInternalErrorWithoutItsMessage() {
        MockServerWebExchange exchange = handled(new IllegalArgumentException("from 3 is not in [1, 2]"));

        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
        assertThat(exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5))).isEqualTo("internal error\n");
    }

    private MockServerWebExchange handled(Throwable failure) {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.delete("/v0/entity?id=k"));
        handler.handle(exchange, failure).block(Duration.ofSeconds(5));
        return exchange;
    }
}
