package dev.dht.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;

/**
 * Where a fault case reports its figures: printed, and written as one row of RELIABILITY.md's "Faults" table to
 * {@code target/reliability/faults-CASE.md} ({@code | date | case | figures | result |}), so that the table can be
 * regenerated from a run with {@code cat target/reliability/faults-*.md}.
 */
final class ReliabilityReport {
    private static final Path DIR = Path.of("target", "reliability");

    private ReliabilityReport() {
    }

    /**
     * Prints and writes one row.
     *
     * @param slug    file name part, e.g. "kill-9"
     * @param name    the case as the table names it
     * @param figures what was measured
     * @param result  the verdict the case asserts, e.g. "0 acknowledged writes lost"
     */
    static void row(String slug, String name, String figures, String result) {
        String row = "| " + LocalDate.now(ZoneOffset.UTC) + " | " + name + " | " + figures.replace("|", "/")
                + " | " + result + " |\n";
        System.out.print("[reliability] " + row);
        try {
            Files.createDirectories(DIR);
            Files.writeString(DIR.resolve("faults-" + slug + ".md"), row);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
