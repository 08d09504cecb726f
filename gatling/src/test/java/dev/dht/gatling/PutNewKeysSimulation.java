package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.scenario;

/** Tape 1: PUTs of keys never written before, at a constant arrival rate. */
public class PutNewKeysSimulation extends TapeSimulation {
    /** Declares the scenario; Gatling instantiates it. */
    public PutNewKeysSimulation() {
        super(false);
        run(scenario("PUT new keys")
                .feed(keys.fresh())
                .exec(put("PUT new key")));
    }
}
