package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.feed;
import static io.gatling.javaapi.core.CoreDsl.percent;
import static io.gatling.javaapi.core.CoreDsl.randomSwitch;
import static io.gatling.javaapi.core.CoreDsl.scenario;

/** Tape 5: each request is, with equal chance, a PUT of a new key or a GET of an existing (preloaded) key. */
public class MixedSimulation extends TapeSimulation {
    /** Declares the scenario; Gatling instantiates it. */
    public MixedSimulation() {
        super(true);
        run(scenario("50 % PUT new keys, 50 % GET existing keys")
                .exec(randomSwitch().on(
                        percent(50.0).then(feed(keys.fresh()), put("PUT new key")),
                        percent(50.0).then(feed(keys.preloadedUniform()), get("GET existing key")))));
    }
}
