package dev.dht.backup.restore;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The progress of a restore on the console: on a terminal one line redrawn in place (a bar, records, bytes, rate,
 * ETA), otherwise a plain log line every {@value #LOG_INTERVAL_MS} ms. Not thread-safe: the restore's thread calls it.
 */
final class RestoreProgress {
    private static final long LOG_INTERVAL_MS = 5_000;
    private static final long DRAW_INTERVAL_MS = 250;
    private final PrintStream out;
    private final boolean terminal;
    private final long total;
    private final long startedNanos = System.nanoTime();
    private long lastPrintMs;

    /**
     * @param total    records the backup's files hold (every member's copy counted), for the bar and ETA
     * @param terminal redraw one line (a console) rather than print log lines
     */
    RestoreProgress(PrintStream out, boolean terminal, long total) {
        this.out = out;
        this.terminal = terminal;
        this.total = Math.max(1, total);
    }

    /** Reports {@code read} records read from the files, {@code written} acknowledged, {@code bytes} of values. */
    void update(long read, long written, long bytes, boolean last) {
        long nowMs = (System.nanoTime() - startedNanos) / 1_000_000;
        if (!last && nowMs - lastPrintMs < (terminal ? DRAW_INTERVAL_MS : LOG_INTERVAL_MS)) {
            return;
        }
        lastPrintMs = nowMs;
        double fraction = Math.min(1.0, (double) read / total);
        double seconds = Math.max(0.001, nowMs / 1000.0);
        double rate = written / seconds;
        long etaSeconds = fraction <= 0 ? 0 : (long) (seconds / fraction - seconds);
        String figures = String.format(Locale.ROOT, "%5.1f%% %,d/%,d records read, %,d written, %.1f MB, %,.0f rec/s, ETA %d:%02d",
                fraction * 100, read, total, written, bytes / 1e6, rate, etaSeconds / 60, etaSeconds % 60);
        if (terminal) {
            int filled = (int) (fraction * 30);
            out.print("\r[" + "#".repeat(filled) + " ".repeat(30 - filled) + "] " + figures + (last ? "\n" : ""));
        } else {
            out.println("restore: " + figures);
        }
        out.flush();
    }
}
