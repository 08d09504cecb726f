package dev.dht.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Counts of {@code dht_client_requests_seconds} in a Prometheus scrape of {@code /actuator/prometheus}. */
public final class ClientRequestCounts {
    private static final Pattern SERIES = Pattern.compile("(?m)^dht_client_requests_seconds_count\\{([^}]*)} (\\S+)$");

    private ClientRequestCounts() {
    }

    /** How many client requests of {@code operation} were answered {@code status}. */
    public static double of(String scrape, String operation, int status) {
        return sum(scrape, "operation=\"" + operation + "\",status=\"" + status + "\"");
    }

    /** How many client requests were counted in all, whatever their operation and status. */
    public static double total(String scrape) {
        return sum(scrape, "");
    }

    private static double sum(String scrape, String tags) {
        double count = 0;
        Matcher series = SERIES.matcher(scrape);
        while (series.find()) {
            if (series.group(1).contains(tags)) {
                count += Double.parseDouble(series.group(2));
            }
        }
        return count;
    }
}
