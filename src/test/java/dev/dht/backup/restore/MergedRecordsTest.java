package dev.dht.backup.restore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The restore's merge of the members' files: one record per key, in key order, the newest copy by last write
 * wins (a tombstone over an older value, a value over an older tombstone), every copy counted as read.
 */
class MergedRecordsTest {

    @Test
    void keysComeOnceInOrderWithTheirNewestCopy() {
        Iterator<KeyedRecord> a = List.of(entry("a", Record.value(5, bytes("a5"))), entry("c", Record.tombstone(9)),
                entry("d", Record.value(1, bytes("d1")))).iterator();
        Iterator<KeyedRecord> b = List.of(entry("a", Record.value(7, bytes("a7"))), entry("b", Record.value(2, bytes("b2"))),
                entry("c", Record.value(8, bytes("c8")))).iterator();
        Iterator<KeyedRecord> c = List.of(entry("d", Record.tombstone(3)), entry("e", Record.value(1, bytes("e1"))))
                .iterator();

        MergedRecords merged = new MergedRecords(List.of(a, b, c));
        List<String> keys = new ArrayList<>();
        Map<String, Record> byKey = new java.util.HashMap<>();
        while (merged.hasNext()) {
            KeyedRecord entry = merged.next();
            String key = new String(entry.key(), StandardCharsets.UTF_8);
            keys.add(key);
            byKey.put(key, entry.record());
        }

        assertThat(keys).containsExactly("a", "b", "c", "d", "e");
        assertThat(byKey.get("a")).isEqualTo(Record.value(7, bytes("a7")));
        assertThat(byKey.get("c").isTombstone()).as("a tombstone newer than the value").isTrue();
        assertThat(byKey.get("d").isTombstone()).as("a tombstone newer than the value").isTrue();
        assertThat(merged.read()).isEqualTo(8);
    }

    private static KeyedRecord entry(String key, Record record) {
        return new KeyedRecord(bytes(key), record);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
