package dev.dht.backup.restore;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * The records of several key-ordered sequences (one per member of a backup) merged into one in key order, one
 * record per key: the copies of a key are reconciled with {@link Record#newest}, the store's own last-write-wins
 * rule. A k-way merge over a heap: memory is one record per source. Not thread-safe; may block as its sources do.
 */
final class MergedRecords implements Iterator<KeyedRecord> {
    private final PriorityQueue<Head> heads = new PriorityQueue<>((a, b) -> Arrays.compareUnsigned(a.entry.key(), b.entry.key()));
    private long read;

    private static final class Head {
        final Iterator<KeyedRecord> source;
        KeyedRecord entry;

        Head(Iterator<KeyedRecord> source) {
            this.source = source;
        }
    }

    /** The merge of {@code sources}, each in strictly increasing key order. */
    MergedRecords(List<? extends Iterator<KeyedRecord>> sources) {
        for (Iterator<KeyedRecord> source : sources) {
            advance(new Head(source));
        }
    }

    private void advance(Head head) {
        if (head.source.hasNext()) {
            head.entry = head.source.next();
            read++;
            heads.add(head);
        }
    }

    @Override
    public boolean hasNext() {
        return !heads.isEmpty();
    }

    @Override
    public KeyedRecord next() {
        Head first = heads.poll();
        if (first == null) {
            throw new NoSuchElementException("no more records");
        }
        byte[] key = first.entry.key();
        Record newest = first.entry.record();
        advance(first);
        while (!heads.isEmpty() && Arrays.equals(heads.peek().entry.key(), key)) {
            Head same = heads.poll();
            newest = Record.newest(newest, same.entry.record());
            advance(same);
        }
        return new KeyedRecord(key, newest);
    }

    /** Records read from the sources so far, every copy counted. */
    long read() {
        return read;
    }
}
