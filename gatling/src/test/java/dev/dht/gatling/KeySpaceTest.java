package dev.dht.gatling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeySpaceTest {
    private static final int SAMPLES = 100_000;

    private final KeySpace keys = new KeySpace(1024, 1000);

    @Test
    void freshKeysNeverRepeat() {
        Iterator<Map<String, Object>> fresh = keys.fresh();
        Set<Object> seen = new HashSet<>();
        for (int i = 0; i < SAMPLES; i++) {
            assertTrue(seen.add(fresh.next().get("key")));
        }
    }

    @Test
    void aTenthOfTheWritesOverwriteAnEarlierKey() {
        Iterator<Map<String, Object>> writes = keys.freshWithOverwrites(0.1);
        Set<Object> seen = new HashSet<>();
        int overwrites = 0;
        for (int i = 0; i < SAMPLES; i++) {
            if (!seen.add(writes.next().get("key"))) {
                overwrites++;
            }
        }
        assertEquals(0.1, overwrites / (double) SAMPLES, 0.01);
    }

    @Test
    void uniformReadsCoverThePreloadedKeysEvenly() {
        Iterator<Map<String, Object>> reads = keys.preloadedUniform();
        int[] hits = new int[1000];
        for (int i = 0; i < SAMPLES; i++) {
            hits[index(reads.next())]++;
        }
        for (int hit : hits) {
            assertTrue(hit > 40 && hit < 180, "hits per key around 100, was " + hit);
        }
    }

    @Test
    void recentReadsGoMostlyToTheNewestTenthOfTheKeys() {
        Iterator<Map<String, Object>> reads = keys.preloadedRecent();
        int newest = 0;
        for (int i = 0; i < SAMPLES; i++) {
            int index = index(reads.next());
            assertTrue(index >= 0 && index < 1000);
            if (index >= 900) {
                newest++;
            }
        }
        // 90 % go to the newest tenth, and a tenth of the other 10 % land there too
        assertEquals(0.91, newest / (double) SAMPLES, 0.01);
    }

    private int index(Map<String, Object> record) {
        String key = (String) record.get("key");
        String prefix = "pre-1024-";
        assertTrue(key.startsWith(prefix), key);
        int index = Integer.parseInt(key.substring(prefix.length()));
        assertEquals(keys.preloaded(index), key);
        return index;
    }
}
