package dev.dht.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How far behind the server's event loops are, in nanoseconds: every {@link #PROBE_PERIOD_NANOS} each loop is
 * given a probe task, and the delay with which it runs is that loop's lag. A loop with more work than the CPU
 * allows, or starved of CPU by other processes, runs it late, and so do requests waiting unread in its sockets,
 * where an in-flight count cannot see them. {@link #nanos()} is the largest lag over the loops, also counting a
 * probe still waiting (so a stuck loop shows at once); gauge {@code dht.event.loop.lag} (seconds).
 * {@link #sustainedNanos()}, the signal for shedding load, is the median lag of a loop's last
 * {@link #SUSTAINED_PROBES} probes (largest over the loops): a single late probe (a GC pause, the JIT at
 * start-up, one large body being copied) does not count, a loop that stays behind does.
 *
 * <p>The signal of Node.js' {@code toobusy} module and of Vert.x' blocked-thread checker. Probes run on the
 * loops themselves and take well under a microsecond; reading is lock-free from any thread.
 */
public final class EventLoopLag {
    /** How often each loop is probed: 10 ms. */
    static final long PROBE_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How many recent probes the sustained lag is the median of: 5 (so 3 of them must be late). */
    static final int SUSTAINED_PROBES = 5;

    private volatile AtomicLongArray lastLag = new AtomicLongArray(0);
    private volatile AtomicLongArray scheduledAt = new AtomicLongArray(0);
    /** The lags of each loop's last SUSTAINED_PROBES probes: loop i at [i * SUSTAINED_PROBES, (i + 1) * SUSTAINED_PROBES). */
    private volatile AtomicLongArray recentLags = new AtomicLongArray(0);
    private volatile boolean stopped;

    /**
     * Starts probing every loop of {@code group}, the web server's event loops (called once the server is up;
     * until then {@link #nanos()} is 0).
     */
    public synchronized void start(EventLoopGroup group) {
        List<EventExecutor> loops = new ArrayList<>();
        group.forEach(loops::add);
        AtomicLongArray scheduled = new AtomicLongArray(loops.size());
        long now = System.nanoTime();
        for (int i = 0; i < loops.size(); i++) {
            scheduled.set(i, now);
        }
        lastLag = new AtomicLongArray(loops.size());
        recentLags = new AtomicLongArray(loops.size() * SUSTAINED_PROBES);
        scheduledAt = scheduled;
        for (int i = 0; i < loops.size(); i++) {
            new Probe(i, loops.get(i), lastLag, recentLags, scheduledAt).schedule();
        }
    }

    /** The largest lag over the loops right now, in ns (0 when none is behind). */
    public long nanos() {
        if (stopped) {
            return 0;
        }
        AtomicLongArray lastLag = this.lastLag;
        AtomicLongArray scheduledAt = this.scheduledAt;
        long now = System.nanoTime();
        long max = 0;
        for (int i = 0; i < lastLag.length(); i++) {
            long waiting = now - scheduledAt.get(i) - PROBE_PERIOD_NANOS;
            max = Math.max(max, Math.max(lastLag.get(i), waiting));
        }
        return max;
    }

    /**
     * The median lag of each loop's last {@link #SUSTAINED_PROBES} probes, largest over the loops, in ns; 0
     * before the probes ran that often. A median, not a minimum: a loop that is behind still runs some probes
     * almost on time, whenever one happens to fall between two long batches.
     */
    public long sustainedNanos() {
        if (stopped) {
            return 0;
        }
        AtomicLongArray recent = this.recentLags;
        long[] lags = new long[SUSTAINED_PROBES];
        long max = 0;
        for (int loop = 0; loop * SUSTAINED_PROBES < recent.length(); loop++) {
            for (int k = 0; k < SUSTAINED_PROBES; k++) {
                lags[k] = recent.get(loop * SUSTAINED_PROBES + k);
            }
            Arrays.sort(lags);
            max = Math.max(max, lags[SUSTAINED_PROBES / 2]);
        }
        return max;
    }

    /** Registers TimeGauge {@code dht.event.loop.lag} (seconds). */
    public void bind(MeterRegistry registry) {
        TimeGauge.builder("dht.event.loop.lag", this, TimeUnit.NANOSECONDS, EventLoopLag::nanos)
                .description("How late the web server's event loops run a task due now (largest over the loops)")
                .register(registry);
    }

    /** Stops probing (the loops may already be shut down). */
    public void stop() {
        stopped = true;
    }

    /** The probe of one loop: reschedules itself after each run. */
    private final class Probe implements Runnable {
        private final int index;
        private final EventExecutor loop;
        private final AtomicLongArray lastLag;
        private final AtomicLongArray recentLags;
        private final AtomicLongArray scheduledAt;
        private int runs;

        Probe(int index, EventExecutor loop, AtomicLongArray lastLag, AtomicLongArray recentLags,
              AtomicLongArray scheduledAt) {
            this.index = index;
            this.loop = loop;
            this.lastLag = lastLag;
            this.recentLags = recentLags;
            this.scheduledAt = scheduledAt;
        }

        void schedule() {
            if (stopped || loop.isShuttingDown()) {
                return;
            }
            scheduledAt.set(index, System.nanoTime());
            try {
                loop.schedule(this, PROBE_PERIOD_NANOS, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shuttingDown) {
                // the loop is going away with the server
            }
        }

        @Override
        public void run() {
            long lag = Math.max(0, System.nanoTime() - scheduledAt.get(index) - PROBE_PERIOD_NANOS);
            lastLag.set(index, lag);
            recentLags.set(index * SUSTAINED_PROBES + runs, lag);
            runs = (runs + 1) % SUSTAINED_PROBES;
            schedule();
        }
    }
}
