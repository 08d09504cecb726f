package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.scenario;

/** Tape 3: GETs of existing (preloaded) keys, chosen uniformly. */
public class GetUniformSimulation extends TapeSimulation {
    /** Declares the scenario; Gatling instantiates it. */
    public GetUniformSimulation() {
        super(true);
        run(scenario("GET existing keys, uniform")
                .feed(keys.preloadedUniform())
                .exec(get("GET existing key")));
    }
}
