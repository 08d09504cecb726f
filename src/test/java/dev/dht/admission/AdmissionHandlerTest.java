package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.metrics.ClientRequestMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admission handler on a connection (an {@link EmbeddedChannel} standing in for Reactor Netty's pipeline,
 * whose part after the handler records what it is handed): refused client requests get a 503 of the handler's
 * own and never reach Reactor Netty, the connection stays usable, answers keep the order of the requests, and
 * slots are given back when an answer is written or the connection closes; client requests are timed in
 * {@code dht.client.requests} from their head to their answer's head. The node's limit here is one client
 * request in flight; the event loop lag is never started, so it reads 0.
 */
class AdmissionHandlerTest {
    /** A queueing delay that never stands in these tests (its target is an hour): the other rules act alone. */
    private static final QueueDelay NEVER_STANDING = new QueueDelay(Duration.ofHours(1), QueueDelay.INTERVAL,
            System::nanoTime);

    private final AdmissionControl control = new AdmissionControl(1, new EventLoopLag(), Duration.ofMillis(100), 0,
            NEVER_STANDING);
    private final BodyMemory memory = new BodyMemory(1 << 20, 1 << 20);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ClientRequestMetrics metrics = new ClientRequestMetrics(registry);
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void close() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @Test
    void aRequestBeyondTheLimitGets503WithRetryAfterAndIsNotHandedOn() {
        AdmissionConnection first = connect();
        first.send(get("/v0/entity?id=a"));
        assertThat(first.handedOn).hasSize(2);
        assertThat(control.inFlight()).isEqualTo(1);

        AdmissionConnection second = connect();
        ByteBuf value = Unpooled.copiedBuffer("refused", StandardCharsets.UTF_8);
        second.send(put("/v0/entity?id=b", value.readableBytes()), new DefaultLastHttpContent(value));

        FullHttpResponse refusal = second.answer();
        assertThat(refusal.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(refusal.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(refusal.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("text/plain");
        assertThat(refusal.content().toString(StandardCharsets.US_ASCII))
                .isEqualTo("overloaded: more than 1 requests in flight, retry later\n");
        assertThat(HttpUtil.isKeepAlive(refusal)).as("the connection stays open").isTrue();
        refusal.release();
        assertThat(second.channel.isOpen()).isTrue();
        assertThat(second.handedOn).as("Reactor Netty never sees a refused request").isEmpty();
        assertThat(value.refCnt()).as("the refused body is released").isZero();
        assertThat(refusals("put")).isEqualTo(1);
        assertThat(control.inFlight()).isEqualTo(1);

        first.writeAnswer(HttpResponseStatus.OK);
        assertThat(control.inFlight()).as("the slot is given back once the answer is written").isZero();
    }

    @Test
    void aRefusedBodyArrivingInPartsIsDroppedAndTheNextRequestIsHandedOn() {
        AdmissionConnection holder = connect();
        holder.send(get("/v0/entity?id=a"));

        AdmissionConnection connection = connect();
        connection.send(put("/v0/entity?id=b", 6));
        connection.answer().release();
        connection.send(new DefaultHttpContent(Unpooled.copiedBuffer("abc", StandardCharsets.UTF_8)));
        connection.send(new DefaultLastHttpContent(Unpooled.copiedBuffer("def", StandardCharsets.UTF_8)));
        assertThat(connection.handedOn).isEmpty();
        assertThat(connection.channel.outboundMessages()).isEmpty();

        holder.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("/v0/entity?id=b"));
        assertThat(connection.handedOn).hasSize(2).first().isInstanceOf(HttpRequest.class);
        assertThat(((HttpRequest) connection.handedOn.get(0)).uri()).isEqualTo("/v0/entity?id=b");
        assertThat(control.inFlight()).isEqualTo(1);
    }

    @Test
    void aRefusalWaitsForTheAnswersToEarlierRequestsOnTheConnection() {
        AdmissionConnection connection = connect();
        connection.send(get("/v0/entity?id=a"));
        connection.send(get("/v0/entity?id=b"));
        assertThat(connection.handedOn).as("only the first request is handed on").hasSize(2);
        assertThat(connection.channel.outboundMessages()).as("no 503 ahead of the first answer").isEmpty();

        connection.writeAnswer(HttpResponseStatus.OK);

        Object answerHead = connection.channel.readOutbound();
        assertThat(answerHead).isInstanceOf(DefaultHttpResponse.class);
        assertThat(((DefaultHttpResponse) answerHead).status()).isEqualTo(HttpResponseStatus.OK);
        Object answerEnd = connection.channel.readOutbound();
        assertThat(answerEnd).isInstanceOf(LastHttpContent.class);
        FullHttpResponse refusal = connection.answer();
        assertThat(refusal.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        refusal.release();
        assertThat(refusals("get")).isEqualTo(1);
        assertThat(control.inFlight()).isZero();
    }

    @Test
    void internalAndActuatorRequestsAreNotLimited() {
        AdmissionConnection holder = connect();
        holder.send(get("/v0/entity?id=a"));

        AdmissionConnection connection = connect();
        connection.send(get("/internal/record?id=x"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("/actuator/health"));
        connection.writeAnswer(HttpResponseStatus.OK);

        assertThat(connection.handedOn).hasSize(4);
        assertThat(control.inFlight()).as("only the client request holds a slot").isEqualTo(1);
    }

    @Test
    void theStatusCheckIsNeverRefusedAndTakesNoSlot() {
        AdmissionConnection holder = connect();
        holder.send(get("/v0/entity?id=a"));

        AdmissionConnection connection = connect();
        connection.send(get("/v0/status"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("http://node-a:8080/v0/status?verbose"));
        connection.writeAnswer(HttpResponseStatus.OK);

        assertThat(connection.handedOn).as("both status checks reach the status handler").hasSize(4);
        assertThat(control.inFlight()).as("only the client request holds a slot").isEqualTo(1);
        AdmissionConnection other = connect();
        other.send(get("/v0/statuses"));
        FullHttpResponse refusal = other.answer();
        assertThat(refusal.status()).as("another /v0 path is limited").isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        refusal.release();
    }

    @Test
    void aClosedConnectionGivesBackTheSlotOfItsUnansweredRequest() {
        AdmissionConnection connection = connect();
        connection.send(get("/v0/entity?id=a"));
        assertThat(control.inFlight()).isEqualTo(1);

        connection.channel.close();

        assertThat(control.inFlight()).isZero();
    }

    @Test
    void anInformationalAnswerDoesNotGiveBackTheSlot() {
        AdmissionConnection connection = connect();
        sendPutAnsweredContinue(connection);
        assertThat(control.inFlight()).as("100 Continue is not the answer").isEqualTo(1);

        connection.send(new DefaultLastHttpContent(Unpooled.copiedBuffer("abc", StandardCharsets.UTF_8)));
        connection.writeAnswer(HttpResponseStatus.CREATED);
        assertThat(control.inFlight()).isZero();
    }

    @Test
    void aRefusedRequestThatExpects100ContinueClosesTheConnection() {
        AdmissionConnection holder = connect();
        holder.send(get("/v0/entity?id=a"));

        AdmissionConnection connection = connect();
        HttpRequest request = put("/v0/entity?id=b", 1000);
        HttpUtil.set100ContinueExpected(request, true);
        connection.send(request);

        FullHttpResponse refusal = connection.answer();
        assertThat(refusal.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(refusal.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo(HttpHeaderValues.CLOSE.toString());
        refusal.release();
        connection.channel.runPendingTasks();
        assertThat(connection.channel.isOpen()).as("the client may or may not send the body: close").isFalse();
    }

    @Test
    void aRefusedRequestWithAMalformedBodyClosesTheConnection() {
        AdmissionConnection holder = connect();
        holder.send(get("/v0/entity?id=a"));

        AdmissionConnection connection = connect();
        connection.send(put("/v0/entity?id=b", 6));
        connection.answer().release();
        LastHttpContent malformed = new DefaultLastHttpContent();
        malformed.setDecoderResult(io.netty.handler.codec.DecoderResult.failure(new IllegalArgumentException("bad chunk")));
        connection.send(malformed);

        assertThat(connection.channel.isOpen()).as("the codec would read nothing more on it").isFalse();
    }

    @Test
    void requestTargetsInAbsoluteFormAreLimitedToo() {
        AdmissionConnection holder = connect();
        holder.send(get("http://node-a:8080/v0/entity?id=a"));
        assertThat(control.inFlight()).as("an absolute-form client request takes a slot").isEqualTo(1);

        AdmissionConnection connection = connect();
        connection.send(get("http://node-a:8080/internal/record?id=x"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("http://node-a:8080"));
        connection.writeAnswer(HttpResponseStatus.OK);
        assertThat(connection.handedOn).as("absolute-form internal and path-less requests are not limited").hasSize(4);

        AdmissionConnection other = connect();
        other.send(get("http://node-a:8080/v0/entity?id=b"));
        FullHttpResponse refusal = other.answer();
        assertThat(refusal.status()).as("an absolute-form client request beyond the limit")
                .isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        refusal.release();
    }

    @Test
    void requestsAnsweredLateFromTheirAdmissionMakeAStandingQueueThatRefusesButNotTheStatusCheck() {
        AtomicLong clock = new AtomicLong();
        AdmissionControl queueing = new AdmissionControl(100, new EventLoopLag(), Duration.ofMillis(100), 2,
                new QueueDelay(Duration.ofMillis(300), Duration.ofMillis(100), clock::get));
        List<AdmissionConnection> served = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            AdmissionConnection connection = connect(queueing);
            connection.send(get("/v0/entity?id=" + i));
            served.add(connection);
        }
        clock.addAndGet(Duration.ofMillis(500).toNanos());
        served.get(0).writeAnswer(HttpResponseStatus.OK);
        served.get(1).writeAnswer(HttpResponseStatus.OK);
        assertThat(queueing.inFlight()).isEqualTo(2);

        AdmissionConnection late = connect(queueing);
        late.send(get("/v0/entity?id=late"));
        FullHttpResponse refusal = late.answer();
        assertThat(refusal.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(refusal.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
        assertThat(refusal.content().toString(StandardCharsets.US_ASCII)).isEqualTo(
                "overloaded: requests queued at least 500 ms over the last 100 ms with 2 in flight, retry later\n");
        refusal.release();
        assertThat(late.handedOn).isEmpty();

        late.send(get("/v0/status"));
        assertThat(late.handedOn).as("the status check is served").hasSize(2);
    }

    @Test
    void clientRequestsAreTimedFromTheirHeadToTheHeadOfTheirAnswerWithItsStatus() throws InterruptedException {
        AdmissionConnection connection = connect();
        connection.send(get("/v0/entity?id=a"));
        Thread.sleep(20);
        assertThat(timed()).as("nothing before the answer").isZero();
        connection.channel.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND));
        assertThat(timed("get", 404)).as("counted when the answer's head is written").isEqualTo(1);
        assertThat(timer("get", 404).totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(20);
        connection.channel.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);

        connection.send(put("/v0/entity?id=a", 1), new DefaultLastHttpContent(Unpooled.copiedBuffer("v", StandardCharsets.UTF_8)));
        connection.writeAnswer(HttpResponseStatus.CREATED);
        connection.send(get("http://node-a:8080/v0/status"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("/v0/entities?start=a"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.DELETE, "/v0/entity?id=a"));
        connection.writeAnswer(HttpResponseStatus.ACCEPTED);
        connection.send(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v0/entity?id=a"));
        connection.writeAnswer(HttpResponseStatus.METHOD_NOT_ALLOWED);

        assertThat(timed("put", 201)).isEqualTo(1);
        assertThat(timed("status", 200)).isEqualTo(1);
        assertThat(timed("range", 200)).isEqualTo(1);
        assertThat(timed("delete", 202)).isEqualTo(1);
        assertThat(timed("other", 405)).isEqualTo(1);
        assertThat(timed()).isEqualTo(6);
    }

    @Test
    void internalActuatorAndUndecodableRequestsAreNotTimed() {
        AdmissionConnection connection = connect();
        connection.send(get("/internal/record?id=x"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("/actuator/prometheus"));
        connection.writeAnswer(HttpResponseStatus.OK);
        connection.send(get("/v0/unknown"));
        connection.writeAnswer(HttpResponseStatus.BAD_REQUEST);
        HttpRequest undecodable = get("/v0/entity?id=a");
        undecodable.setDecoderResult(io.netty.handler.codec.DecoderResult.failure(new IllegalArgumentException("bad")));
        connection.send(undecodable);
        connection.writeAnswer(HttpResponseStatus.BAD_REQUEST);

        assertThat(connection.handedOn).hasSize(8);
        assertThat(timed()).isZero();
    }

    @Test
    void pipelinedRequestsAreTimedInTheirOrderWithTheirOwnAnswers() {
        AdmissionConnection connection = connect();
        connection.send(get("/v0/entity?id=a"));
        connection.send(get("/internal/record?id=a"));
        connection.send(get("/v0/status"));
        connection.send(put("/v0/entity?id=b", 0));
        assertThat(timed()).isZero();

        connection.writeAnswer(HttpResponseStatus.NOT_FOUND);
        assertThat(timed("get", 404)).isEqualTo(1);
        connection.writeAnswer(HttpResponseStatus.FORBIDDEN);
        assertThat(timed()).as("the internal request's answer counts for nothing").isEqualTo(1);
        connection.writeAnswer(HttpResponseStatus.SERVICE_UNAVAILABLE);
        assertThat(timed("status", 503)).isEqualTo(1);
        FullHttpResponse refusal = null;
        for (Object written = connection.channel.readOutbound(); written != null; written = connection.channel.readOutbound()) {
            if (written instanceof FullHttpResponse full) {
                refusal = full;
            }
        }
        assertThat(refusal).isNotNull();
        assertThat(refusal.status()).as("the PUT, refused behind them").isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
        refusal.release();
        assertThat(timed("put", 503)).as("a refusal counts once").isEqualTo(1);
        assertThat(timed()).isEqualTo(3);
    }

    @Test
    void anInformationalAnswerDoesNotEndTheTiming() {
        AdmissionConnection connection = connect();
        sendPutAnsweredContinue(connection);
        assertThat(timed()).as("100 Continue is not the answer").isZero();

        connection.send(new DefaultLastHttpContent(Unpooled.copiedBuffer("abc", StandardCharsets.UTF_8)));
        connection.writeAnswer(HttpResponseStatus.CREATED);
        assertThat(timed("put", 201)).isEqualTo(1);
        assertThat(timed()).isEqualTo(1);
    }

    @Test
    void aRequestWhoseConnectionClosesBeforeItsAnswerIsNotTimed() {
        AdmissionConnection connection = connect();
        connection.send(get("/v0/entity?id=a"));
        connection.send(get("/v0/status"));
        connection.channel.close();
        connection.channel.writeAndFlush(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));

        assertThat(timed()).isZero();
        assertThat(control.inFlight()).isZero();
    }

    private double refusals(String operation) {
        return timed(operation, 503);
    }

    /** How many {@code operation} requests were answered {@code status}, as {@code dht.client.requests} counts. */
    private double timed(String operation, int status) {
        Timer timer = timer(operation, status);
        return timer == null ? 0 : timer.count();
    }

    private Timer timer(String operation, int status) {
        return registry.find("dht.client.requests").tag("operation", operation).tag("status", Integer.toString(status))
                .timer();
    }

    /** How many requests {@code dht.client.requests} counts in all. */
    private double timed() {
        return registry.find("dht.client.requests").timers().stream().mapToDouble(Timer::count).sum();
    }

    private AdmissionConnection connect() {
        return connect(control);
    }

    private AdmissionConnection connect(AdmissionControl admission) {
        AdmissionConnection connection = new AdmissionConnection(new AdmissionHandler(admission, memory, metrics),
                request -> !HttpUtil.isContentLengthSet(request));
        channels.add(connection.channel);
        return connection;
    }

    private static HttpRequest get(String uri) {
        return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri);
    }

    private static HttpRequest put(String uri, int contentLength) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, uri);
        HttpUtil.setContentLength(request, contentLength);
        return request;
    }

    /** Sends the head of a 3-byte PUT that expects {@code 100 Continue}, and writes that 100 Continue. */
    private static void sendPutAnsweredContinue(AdmissionConnection connection) {
        HttpRequest request = put("/v0/entity?id=a", 3);
        HttpUtil.set100ContinueExpected(request, true);
        connection.send(request);
        connection.channel.writeOutbound(new io.netty.handler.codec.http.DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    }
}
