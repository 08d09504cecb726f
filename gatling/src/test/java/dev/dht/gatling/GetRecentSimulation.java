package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.scenario;

/**
 * Tape 4: GETs of existing keys skewed towards the recently written ones: 90 % of the reads go to the newest
 * 10 % of the preloaded keys (see {@link KeySpace#preloadedRecent()}).
 */
public class GetRecentSimulation extends TapeSimulation {
    /** Declares the scenario; Gatling instantiates it. */
    public GetRecentSimulation() {
        super(true);
        run(scenario("GET existing keys, recent first")
                .feed(keys.preloadedRecent())
                .exec(get("GET recent key")));
    }
}
