package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.exec;

import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Simulation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * What the five tapes share: the {@link LoadSettings}, the run's {@link KeySpace}, the recorded PUT and GET
 * requests, the preload of the keys that GET tapes read (in {@link #before()}, so it is not part of the measured
 * load), the {@link LatencyRecorder}'s summary and, for a {@link RecoveryProbe} in its own JVM, the time of the
 * first request. A tape's constructor only declares its scenario and hands it to {@link #run(ScenarioBuilder)}.
 */
public abstract class TapeSimulation extends Simulation {
    /** This run's settings. */
    protected final LoadSettings settings = LoadSettings.fromSystemProperties();
    /** This run's keys. */
    protected final KeySpace keys = new KeySpace(settings.valueSize(), settings.keys());

    private final LatencyRecorder recorder = new LatencyRecorder(settings.warmup().toMillis());
    private final boolean readsPreloadedKeys;

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
        settings.loadStartFile().ifPresent(this::writeLoadStartWhenItBegins);
    }

    /**
     * Writes the epoch ms of the first request to {@code file} (through a temporary file and a rename, so a reader
     * never sees half of it) as soon as it is sent, from a daemon thread that polls every 10 ms. This happens at
     * the start of the load, while this JVM still has file descriptors to spare: under overload the open model
     * may open connections up to the process's limit, which is why the probe runs in a JVM of its own.
     */
    private void writeLoadStartWhenItBegins(Path file) {
        Thread marker = new Thread(() -> {
            try {
                while (recorder.firstSentMillis() == Long.MAX_VALUE) {
                    Thread.sleep(10);
                }
                Path partial = file.resolveSibling(file.getFileName() + ".partial");
                Files.writeString(partial, Long.toString(recorder.firstSentMillis()));
                Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                System.err.println("cannot write the load start to " + file + ": " + e);
            }
        }, "load-start-marker");
        marker.setDaemon(true);
        marker.start();
    }

    @Override
    public void after() {
        System.out.println("latency summary (all requests; ms):");
        recorder.summary().forEach(line -> System.out.println("  " + line));
        settings.summary().ifPresent(recorder::write);
    }
}
