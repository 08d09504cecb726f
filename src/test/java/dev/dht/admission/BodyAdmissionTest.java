package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ClientRequestMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admission handler's bound on request-body bytes in flight ({@link BodyMemory}), on connections that are
 * {@link EmbeddedChannel}s standing in for Reactor Netty's pipeline: a declared body is reserved at admission and
 * given back when the answer is written or the connection closes, whatever happened in between; a body with no room
 * is refused 503 before any of it is handed on; a chunked body is counted part by part and ended, marked
 * {@link RefusedBody}, at the part with no room. The node holds at most {@value #LIMIT} bytes of bodies, values of
 * at most {@value #MAX_VALUE} bytes; up to 100 requests may be in flight.
 */
class BodyAdmissionTest {
    private static final int LIMIT = 1000;
    private static final int MAX_VALUE = 400;

    private final BodyMemory memory = new BodyMemory(LIMIT, MAX_VALUE);
    private final AdmissionControl control = new AdmissionControl(100, new EventLoopLag(), Duration.ofMillis(100), 0,
            new QueueDelay(Duration.ofHours(1), QueueDelay.INTERVAL, System::nanoTime));
    private final ClientRequestMetrics metrics = new ClientRequestMetrics(new SimpleMeterRegistry());
    private final List<AdmissionConnection> connections = new ArrayList<>();

    @AfterEach
    void close() {
        connections.forEach(connection -> connection.channel.finishAndReleaseAll());
    }

    @Test
    void aDeclaredBodyIsReservedAtAdmissionAndGivenBackWhenItsAnswerIsWritten() {
        AdmissionConnection connection = connect();
        connection.send(put("a", 300));
        assertThat(memory.inFlightBytes()).as("reserved before a byte of it arrived").isEqualTo(300);

        connection.send(new DefaultLastHttpContent(bytes(300)));
        assertThat(memory.inFlightBytes()).isEqualTo(300);
        connection.writeAnswer(HttpResponseStatus.CREATED);

        assertThat(memory.inFlightBytes()).isZero();
        assertThat(control.inFlight()).isZero();
    }

    @Test
    void aBodyWithoutRoomIs503WithRetryAfterBeforeAnyOfItIsHandedOnAndTakesNoSlot() {
        AdmissionConnection holder = connect();
        holder.send(put("a", 400));
        connect().send(put("b", 400));

        AdmissionConnection refused = connect();
        ByteBuf body = bytes(300);
        refused.send(put("c", 300), new DefaultLastHttpContent(body));

        FullHttpResponse answer = refused.answer();
        assertThat(answer.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(answer.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(answer.content().toString(StandardCharsets.US_ASCII)).isEqualTo("overloaded: request bodies of 800"
                + " bytes in flight, 300 more would pass dht.max-in-flight-bytes (1000), retry later\n");
        assertThat(HttpUtil.isKeepAlive(answer)).isTrue();
        answer.release();
        assertThat(refused.handedOn).as("Reactor Netty never sees it").isEmpty();
        assertThat(body.refCnt()).as("its body is dropped").isZero();
        assertThat(control.inFlight()).as("no slot taken").isEqualTo(2);
        assertThat(memory.inFlightBytes()).isEqualTo(800);

        holder.writeAnswer(HttpResponseStatus.CREATED);
        refused.send(put("c", 300));
        assertThat(refused.handedOn).as("admitted once there is room").hasSize(1);
        assertThat(memory.inFlightBytes()).isEqualTo(700);
    }

    @Test
    void aBodyDeclaredLargerThanAValueReservesNothingSinceItIsRefused413Unread() {
        AdmissionConnection connection = connect();
        connection.send(put("big", 10_000_000));

        assertThat(connection.handedOn).hasSize(1);
        assertThat(memory.inFlightBytes()).isZero();
    }

    @Test
    void aClosedConnectionGivesBackTheBytesOfItsUnansweredRequest() {
        AdmissionConnection connection = connect();
        connection.send(put("a", 400));
        connection.send(new DefaultHttpContent(bytes(100)));

        connection.channel.close();

        assertThat(memory.inFlightBytes()).isZero();
        assertThat(control.inFlight()).isZero();
    }

    @Test
    void aChunkedBodyIsCountedAsItArrivesAndGivenBackWithItsAnswer() {
        AdmissionConnection connection = connect();
        HttpRequest request = chunkedPut("a");
        connection.send(request);
        assertThat(memory.inFlightBytes()).isZero();

        connection.send(new DefaultHttpContent(bytes(150)));
        connection.send(new DefaultHttpContent(bytes(150)));
        assertThat(memory.inFlightBytes()).isEqualTo(300);
        connection.send(new DefaultLastHttpContent(bytes(50)));
        assertThat(memory.inFlightBytes()).isEqualTo(350);
        assertThat(connection.handedOn).hasSize(4);

        connection.writeAnswer(HttpResponseStatus.CREATED);
        assertThat(memory.inFlightBytes()).isZero();
    }

    @Test
    void aChunkedBodyCountsAtMostOneValueSinceTheReaderRefusesMore() {
        AdmissionConnection connection = connect();
        connection.send(chunkedPut("a"));
        for (int i = 0; i < 5; i++) {
            connection.send(new DefaultHttpContent(bytes(300)));
        }

        assertThat(memory.inFlightBytes()).isEqualTo(MAX_VALUE);
        assertThat(connection.handedOn).as("413 is the reader's to answer").hasSize(6);
    }

    @Test
    void aChunkedPartWithoutRoomEndsTheBodyMarkedRefusedAndTheRestIsDropped() {
        AdmissionConnection holder = connect();
        holder.send(put("a", 400));
        holder.send(new DefaultLastHttpContent(bytes(400)));
        AdmissionConnection other = connect();
        other.send(put("b", 400));

        AdmissionConnection connection = connect();
        HttpRequest request = chunkedPut("c");
        connection.send(request);
        connection.send(new DefaultHttpContent(bytes(150)));
        ByteBuf withoutRoom = bytes(100);
        connection.send(new DefaultHttpContent(withoutRoom));

        assertThat(connection.handedOn).hasSize(3);
        assertThat(connection.handedOn.get(2)).as("the body ends where room ran out")
                .isInstanceOf(LastHttpContent.class);
        assertThat(((LastHttpContent) connection.handedOn.get(2)).content().readableBytes()).isZero();
        assertThat(withoutRoom.refCnt()).isZero();
        OverloadedException refusal = RefusedBody.refusalOf(connection.channel, request.headers());
        assertThat(refusal).isNotNull();
        assertThat(refusal.reason()).isEqualTo(OverloadReason.BODY_MEMORY);
        assertThat(RefusedBody.refusalOf(holder.channel, holder.request().headers())).isNull();

        ByteBuf rest = bytes(200);
        connection.send(new DefaultHttpContent(rest));
        connection.send(new DefaultLastHttpContent(bytes(10)));
        assertThat(connection.handedOn).as("the rest is dropped").hasSize(3);
        assertThat(rest.refCnt()).isZero();
        assertThat(memory.inFlightBytes()).isEqualTo(950);

        connection.writeAnswer(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(memory.inFlightBytes()).isEqualTo(800);
        assertThat(RefusedBody.refusalOf(connection.channel, request.headers())).as("cleared with its answer").isNull();
        connection.send(get("c"));
        assertThat(connection.handedOn).as("the connection serves the next request").hasSize(5);
    }

    @Test
    void partsOfABodyWhoseAnswerIsWrittenCountNothing() {
        AdmissionConnection connection = connect();
        connection.send(chunkedPut("a"));
        connection.send(new DefaultHttpContent(bytes(100)));
        connection.writeAnswer(HttpResponseStatus.BAD_REQUEST);

        connection.send(new DefaultHttpContent(bytes(100)));
        connection.send(new DefaultLastHttpContent(bytes(100)));

        assertThat(memory.inFlightBytes()).isZero();
    }

    @Test
    void aBodyHeldByWritesPastItsRequestStaysCountedUntilTheyAreDone() {
        BodyHold settledFirst = new BodyHold(memory, 300);
        settledFirst.settled();
        settledFirst.requestEnded();
        assertThat(memory.inFlightBytes()).as("nothing held once the writes are done").isZero();

        BodyHold endedFirst = new BodyHold(memory, 300);
        endedFirst.requestEnded();
        assertThat(memory.inFlightBytes()).isEqualTo(300);
        assertThat(memory.reserve(800)).as("the held value leaves no room").isNotNull();
        endedFirst.settled();
        assertThat(memory.inFlightBytes()).isZero();
        assertThat(memory.reserve(800)).isNull();
    }

    private AdmissionConnection connect() {
        AdmissionConnection connection = new AdmissionConnection(new AdmissionHandler(control, memory, metrics),
                request -> request.method() == HttpMethod.GET);
        connections.add(connection);
        return connection;
    }

    private static HttpRequest put(String id, int contentLength) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/v0/entity?id=" + id);
        HttpUtil.setContentLength(request, contentLength);
        return request;
    }

    private static HttpRequest chunkedPut(String id) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/v0/entity?id=" + id);
        HttpUtil.setTransferEncodingChunked(request, true);
        return request;
    }

    private static HttpRequest get(String id) {
        return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/v0/entity?id=" + id);
    }

    private static ByteBuf bytes(int count) {
        return Unpooled.wrappedBuffer(new byte[count]);
    }
}
