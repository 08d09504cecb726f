package dev.dht.gatling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LatencyRecorderTest {

    @Test
    void percentilesAreNearestRank() {
        long[] counts = new long[200];
        for (int millis = 1; millis <= 100; millis++) {
            counts[millis] = 1;          // one request each of 1..100 ms
        }
        assertEquals(50, LatencyRecorder.percentile(counts, 50));
        assertEquals(99, LatencyRecorder.percentile(counts, 99));
        assertEquals(100, LatencyRecorder.percentile(counts, 99.9));
        assertEquals(100, LatencyRecorder.percentile(counts, 100));
        assertEquals(1, LatencyRecorder.percentile(counts, 0.5));
    }

    @Test
    void aFewSlowRequestsMoveOnlyTheHighPercentiles() {
        long[] counts = new long[2000];
        counts[2] = 9_980;
        counts[1500] = 20;               // 0.2 % of the requests took 1.5 s
        assertEquals(2, LatencyRecorder.percentile(counts, 50));
        assertEquals(2, LatencyRecorder.percentile(counts, 99));
        assertEquals(1500, LatencyRecorder.percentile(counts, 99.9));
    }

    @Test
    void noRequestsGiveMinusOne() {
        assertEquals(-1, LatencyRecorder.percentile(new long[10], 99));
        assertEquals("requests=0", new LatencyRecorder(0).summary().get(0));
    }
}
