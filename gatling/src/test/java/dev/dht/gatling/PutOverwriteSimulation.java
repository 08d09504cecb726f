package dev.dht.gatling;

import static io.gatling.javaapi.core.CoreDsl.scenario;

/**
 * Tape 2: PUTs of new keys, except that 10 % of them ({@link #OVERWRITES}) overwrite a key written earlier in the
 * run.
 */
public class PutOverwriteSimulation extends TapeSimulation {
    /** Share of the PUTs that overwrite an earlier key. */
    static final double OVERWRITES = 0.1;

    /** Declares the scenario; Gatling instantiates it. */
    public PutOverwriteSimulation() {
        super(false);
        run(scenario("PUT with 10 % overwrites")
                .feed(keys.freshWithOverwrites(OVERWRITES))
                .exec(put("PUT new or overwritten key")));
    }
}
