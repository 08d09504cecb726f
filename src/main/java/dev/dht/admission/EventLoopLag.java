package dev.dht.admission;

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

    /** The probed loops' measurements, replaced as a whole by {@link #start}; none before it. */
    private volatile Measurements measurements = new Measurements(0);
    private volatile boolean stopped;

    /**
     * Starts probing every loop of {@code group}, the web server's event loops (called once the server is up;
     * until then {@link #nanos()} is 0).
     */
    public synchronized void start(EventLoopGroup group) {
        List<EventExecutor> loops = new ArrayList<>();
        group.forEach(loops::add);
        Measurements started = new Measurements(loops.size());
        measurements = started;
        for (int i = 0; i < loops.size(); i++) {
            new Probe(i, loops.get(i), started).schedule();
        }
    }

    /** The largest lag over the loops right now, in ns (0 when none is behind). */
    public long nanos() {
        if (stopped) {
            return 0;
        }
        Measurements m = measurements;
        long now = System.nanoTime();
        long max = 0;
        for (int i = 0; i < m.loops; i++) {
            long waiting = now - m.scheduledAt.get(i) - PROBE_PERIOD_NANOS;
            max = Math.max(max, Math.max(m.lastLag.get(i), waiting));
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
        Measurements m = measurements;
        long[] lags = new long[SUSTAINED_PROBES];
        long max = 0;
        for (int loop = 0; loop < m.loops; loop++) {
            for (int k = 0; k < SUSTAINED_PROBES; k++) {
                lags[k] = m.recentLags.get(loop * SUSTAINED_PROBES + k);
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

    /**
     * What the probes of one {@link #start} write and the readers read, per loop i: when its pending probe was
     * scheduled, its last lag, and its last {@link #SUSTAINED_PROBES} lags at
     * {@code [i * SUSTAINED_PROBES, (i + 1) * SUSTAINED_PROBES)}. One object, so a reader never pairs arrays of
     * two different starts.
     */
    private static final class Measurements {
        final int loops;
        final AtomicLongArray scheduledAt;
        final AtomicLongArray lastLag;
        final AtomicLongArray recentLags;

        Measurements(int loops) {
            this.loops = loops;
            this.scheduledAt = new AtomicLongArray(loops);
            this.lastLag = new AtomicLongArray(loops);
            this.recentLags = new AtomicLongArray(loops * SUSTAINED_PROBES);
            long now = System.nanoTime();
            for (int i = 0; i < loops; i++) {
                scheduledAt.set(i, now);
            }
        }
    }

    /** The probe of one loop: reschedules itself after each run. */
    private final class Probe implements Runnable {
        private final int index;
        private final EventExecutor loop;
        private final Measurements measurements;
        private int runs;

        Probe(int index, EventExecutor loop, Measurements measurements) {
            this.index = index;
            this.loop = loop;
            this.measurements = measurements;
        }

        void schedule() {
            if (stopped || loop.isShuttingDown()) {
                return;
            }
            measurements.scheduledAt.set(index, System.nanoTime());
            try {
                loop.schedule(this, PROBE_PERIOD_NANOS, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shuttingDown) {
                // the loop is going away with the server
            }
        }

        @Override
        public void run() {
            long lag = Math.max(0, System.nanoTime() - measurements.scheduledAt.get(index) - PROBE_PERIOD_NANOS);
            measurements.lastLag.set(index, lag);
            measurements.recentLags.set(index * SUSTAINED_PROBES + runs, lag);
            runs = (runs + 1) % SUSTAINED_PROBES;
            schedule();
        }
    }
}
