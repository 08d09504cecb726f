package dev.dht.config;

import org.springframework.context.SmartLifecycle;

/**
 * Background work of a feature (scheduled rounds, a rebuild, a membership change, a cleanup) started after the web
 * server has started, in the last lifecycle phase, since peers call this node back while it runs, and stopped
 * first on shutdown, before the web server and the replica client's event loops stop: work still calling peers
 * would keep those loops from ever becoming quiet, and their shutdown would wait for its full timeout. The two
 * actions run on Spring's lifecycle thread and must return promptly (start the work, do not do it).
 */
final class ServingLifecycle implements SmartLifecycle {
    private final Runnable start;
    private final Runnable stop;
    private volatile boolean running;

    /**
     * @param start starts the feature's work, in the order it needs
     * @param stop  stops it (as a rule in the reverse order)
     */
    ServingLifecycle(Runnable start, Runnable stop) {
        this.start = start;
        this.stop = stop;
    }

    @Override
    public void start() {
        start.run();
        running = true;
    }

    @Override
    public void stop() {
        stop.run();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
