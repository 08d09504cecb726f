package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.exec;

import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Simulation;

/**
 * What the five tapes share: the {@link LoadSettings}, the run's {@link KeySpace}, the recorded PUT and GET
 * requests, the preload of the keys that GET tapes read (in {@link #before()}, so it is not part of the measured
 * load), the {@link LatencyRecorder}'s summary and the optional {@link RecoveryProbe}. A tape's constructor only
 * declares its scenario and hands it to {@link #run(ScenarioBuilder)}.
 */
public abstract class TapeSimulation extends Simulation {
    /** This run's settings. */
    protected final LoadSettings settings = LoadSettings.fromSystemProperties();
    /** This run's keys. */
    protected final KeySpace keys = new KeySpace(settings.valueSize(), settings.keys());

    private final LatencyRecorder recorder = new LatencyRecorder(settings.warmup().toMillis());
    private final boolean readsPreloadedKeys;
    private RecoveryProbe probe;

    /** A tape; {@code readsPreloadedKeys}: whether its GETs need the preloaded keys. */
    protected TapeSimulation(boolean readsPreloadedKeys) {
        this.readsPreloadedKeys = readsPreloadedKeys;
    }

    /** Sets the tape up: {@code scenario} injected at the settings' arrival rate, with their HTTP protocol. */
    protected void run(ScenarioBuilder scenario) {
        setUp(scenario.injectOpen(settings.injection())).protocols(settings.protocol());
    }

    /** A recorded PUT of the session's {@code key}, named {@code name} in Gatling's report. */
    protected ChainBuilder put(String name) {
        return exec(settings.put(name)).exec(recorder::record);
    }

    /** A recorded GET of the session's {@code key}, which must exist. */
    protected ChainBuilder get(String name) {
        return exec(settings.get(name)).exec(recorder::record);
    }

    @Override
    public void before() {
        System.out.println(getClass().getSimpleName() + ": " + settings);
        if (readsPreloadedKeys) {
            try {
                new Preloader(settings, keys).preloadIfMissing();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("preload interrupted", e);
            }
        }
        settings.recoveryReport().ifPresent(report -> {
            probe = new RecoveryProbe(settings, recorder::firstSentMillis, report);
            probe.start();
        });
    }

    @Override
    public void after() {
        System.out.println("latency summary (all requests; ms):");
        recorder.summary().forEach(line -> System.out.println("  " + line));
        settings.summary().ifPresent(recorder::write);
        if (probe != null) {
            try {
                probe.finish();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
