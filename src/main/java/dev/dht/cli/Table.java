package dev.dht.cli;

import java.util.List;
import java.util.Locale;

/** Rows as left-aligned columns two spaces apart, the first row the header. */
final class Table {
    private Table() {
    }

    /** The text of {@code rows}, one line each. */
    static String of(List<String[]> rows) {
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder text = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(String.format(Locale.ROOT, "%-" + widths[i] + "s", row[i]));
                if (i < row.length - 1) {
                    line.append("  ");
                }
            }
            text.append(line.toString().stripTrailing()).append('\n');
        }
        return text.toString();
    }
}
