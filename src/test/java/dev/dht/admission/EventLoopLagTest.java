package dev.dht.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.metrics.ClientRequestMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The event loop lag sees a loop that cannot run its tasks on time, and admission control refuses client
 * requests while a loop stays behind with requests piling up ({@link #LAG_SHEDDING_MIN_IN_FLIGHT} in flight), not
 * for one late task (a GC pause, one large body) nor while only a few requests are served (a cold JVM compiling
 * under light load), and never the status check. A loop is kept busy by tasks that sleep, standing in for a loop
 * with more work than the CPU allows. (That a refusal is a 503 with Retry-After, and that internal requests are
 * not limited, is {@link AdmissionHandlerTest}'s.)
 */
class EventLoopLagTest {
    /** A queueing delay that never stands in these tests (its target is an hour): the other rules act alone. */
    private static final QueueDelay NEVER_STANDING = new QueueDelay(Duration.ofHours(1), QueueDelay.INTERVAL,
            System::nanoTime);

    private static final Duration MAX_LAG = Duration.ofMillis(100);
    private static final int LAG_SHEDDING_MIN_IN_FLIGHT = 8;

    // A plain task loop, as the lag probe sees it: Netty 4.2 deprecates it, but its IO-handler replacement
    // (MultiThreadIoEventLoopGroup with LocalIoHandler) runs the probe ahead of the busy tasks, so that the test
    // measures no lag.
    @SuppressWarnings("deprecation")
    private final EventLoopGroup group = new DefaultEventLoopGroup(2);
    private final EventLoopLag lag = new EventLoopLag();
    private final AdmissionControl control = new AdmissionControl(100, lag, MAX_LAG, LAG_SHEDDING_MIN_IN_FLIGHT,
            NEVER_STANDING);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicBoolean busy = new AtomicBoolean(true);

    @AfterEach
    void stop() {
        release.countDown();
        busy.set(false);
        lag.stop();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void oneLongTaskShowsAsLagButIsNotSustainedAndRequestsAreServed() {
        lag.start(group);
        // "on time" is the absence of lag, which cannot be awaited: it must hold for the whole 200 ms of probes
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(lag.nanos()).as("idle loops are on time").isLessThan(MAX_LAG.toNanos()));

        EventExecutor held = group.next();
        held.execute(() -> hold(release));
        await().atMost(Duration.ofSeconds(4)).untilAsserted(() ->
                assertThat(lag.nanos()).as("one loop held").isGreaterThan(Duration.ofMillis(250).toNanos()));
        release.countDown();
        // the late probe has run once a probe after it ran on time (nanos() counts the last probe's lag): polled
        // every millisecond, so the late probe is still among the last SUSTAINED_PROBES when the median is read
        await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(lag.nanos()).as("the loop caught up").isLessThan(MAX_LAG.toNanos()));

        assertThat(lag.sustainedNanos()).as("one late probe is not sustained lag").isLessThan(MAX_LAG.toNanos());
        assertThat(control.admit()).as("admitted").isNull();
    }

    @Test
    void requestsAreRefusedWhileALoopStaysBehindWithRequestsPilingUpAndAdmittedOnceItCaughtUp() {
        keepOneLoopBehind();

        for (int i = 0; i < LAG_SHEDDING_MIN_IN_FLIGHT; i++) {
            assertThat(control.admit()).as("request %d of a light load is admitted although the loop lags", i).isNull();
        }
        assertThat(control.admit()).hasMessageStartingWith("event loops ")
                .hasMessageEndingWith(" ms behind with " + LAG_SHEDDING_MIN_IN_FLIGHT + " requests in flight");
        assertThat(control.inFlight()).as("a refusal takes no slot").isEqualTo(LAG_SHEDDING_MIN_IN_FLIGHT);

        control.release(control.now());
        assertThat(control.admit()).as("below the floor again: admitted").isNull();
        assertThat(control.admit()).as("at the floor: refused").isNotNull();

        busy.set(false);
        // a refusal takes no slot, so asking until admitted takes the one slot a single admitted call takes
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(control.admit()).as("admitted again once the loop caught up").isNull());
    }

    @Test
    void lightConcurrentLoadOnALaggingNodeGetsNo503AndTheStatusCheckIsServed() {
        keepOneLoopBehind();
        @SuppressWarnings("resource") // finished below
        EmbeddedChannel connection = new EmbeddedChannel(new AdmissionHandler(control,
                new BodyMemory(1024, 1024), new ClientRequestMetrics(new SimpleMeterRegistry())));
        try {
            // 8 clients, each with one request at a time, as on a fresh cluster's first load: below the floor
            for (int round = 0; round < 20; round++) {
                for (int client = 0; client < LAG_SHEDDING_MIN_IN_FLIGHT; client++) {
                    assertThat(control.admit()).as("round %d, client %d", round, client).isNull();
                }
                for (int client = 0; client < LAG_SHEDDING_MIN_IN_FLIGHT; client++) {
                    control.release(control.now());
                }
            }
            // heavy load: the floor is full, so the status check comes in while client requests are refused
            for (int i = 0; i < LAG_SHEDDING_MIN_IN_FLIGHT; i++) {
                control.admit();
            }
            connection.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/v0/status"));
            Object handedOn = connection.readInbound();
            assertThat(handedOn).as("the status check reaches its handler").isInstanceOf(HttpRequest.class);
            ReferenceCountUtil.release(handedOn);
            assertThat(connection.<Object>readOutbound()).as("and is not refused").isNull();
            assertThat(lag.sustainedNanos()).as("the loop still lags").isGreaterThan(MAX_LAG.toNanos());
        } finally {
            connection.finishAndReleaseAll();
        }
    }

    /** Starts the probes and keeps one loop busy until most probes of the last 5 waited (about 1 s). */
    private void keepOneLoopBehind() {
        lag.start(group);
        EventExecutor loop = group.next();
        loop.execute(new Sleeper(loop));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(lag.sustainedNanos()).as("every probe waits for a 300-ms task")
                        .isGreaterThan(MAX_LAG.toNanos()));
    }

    /** Occupies its loop for 300 ms at a time, resubmitting itself while {@link #busy} is set. */
    private final class Sleeper implements Runnable {
        private final EventExecutor loop;

        Sleeper(EventExecutor loop) {
            this.loop = loop;
        }

        @Override
        public void run() {
            if (!busy.get()) {
                return;
            }
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            loop.execute(this);
        }
    }

    private static void hold(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
