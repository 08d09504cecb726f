package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Request heads the codec lets through but a node refuses (marked failed, so Reactor Netty answers 400 and no handler
 * runs): versions other than HTTP/1.x, and any Transfer-Encoding but exactly one "chunked".
 */
class RequestFramingTest {

    @ParameterizedTest
    @ValueSource(strings = {"chunked", "Chunked", "CHUNKED"})
    void oneChunkedCodingPasses(String coding) {
        HttpRequest request = put(HttpVersion.HTTP_1_1);
        request.headers().set("Transfer-Encoding", coding);

        RequestFraming.check(request);

        assertThat(request.decoderResult().isSuccess()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"gzip, chunked", "deflate,chunked", "identity", "chunked, chunked"})
    void anyOtherCodingIsRefused(String coding) {
        HttpRequest request = put(HttpVersion.HTTP_1_1);
        request.headers().set("Transfer-Encoding", coding);

        RequestFraming.check(request);

        assertThat(request.decoderResult().isFailure()).as(coding).isTrue();
        assertThat(request.decoderResult().cause()).hasMessageContaining("only chunked is accepted");
    }

    @ParameterizedTest
    @ValueSource(strings = {"HTTP/1.0", "HTTP/1.1", "HTTP/1.9"})
    void http1VersionsPass(String version) {
        HttpRequest request = put(HttpVersion.valueOf(version));

        RequestFraming.check(request);

        assertThat(request.decoderResult().isSuccess()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"HTTP/2.0", "HTTP/3.0", "HTTP/0.9"})
    void otherVersionsAreRefused(String version) {
        HttpRequest request = put(HttpVersion.valueOf(version));

        RequestFraming.check(request);

        assertThat(request.decoderResult().isFailure()).as(version).isTrue();
    }

    private static HttpRequest put(HttpVersion version) {
        return new DefaultHttpRequest(version, HttpMethod.PUT, "/v0/entity?id=a");
    }
}
