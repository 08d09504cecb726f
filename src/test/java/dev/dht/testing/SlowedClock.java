package dev.dht.testing;

/** The system clock running {@code slowdown} times slower from its reading at construction (UTC); thread-safe. */
public final class SlowedClock extends UtcMillisClock {
    private final long startMillis = System.currentTimeMillis();
    private final long startNanos = System.nanoTime();
    private final int slowdown;

    /** @param slowdown how many real milliseconds make one of this clock's, at least 1 */
    public SlowedClock(int slowdown) {
        if (slowdown < 1) {
            throw new IllegalArgumentException("slowdown must be at least 1, was " + slowdown);
        }
        this.slowdown = slowdown;
    }

    @Override
    public long millis() {
        return startMillis + (System.nanoTime() - startNanos) / 1_000_000 / slowdown;
    }
}
