package dev.dht.storage;

import java.io.IOException;

/** A repository that passes every call to another one; tests override the calls they watch or slow down. */
public class DelegatingRecordRepository implements RecordRepository {
    private final RecordRepository delegate;

    /** @param delegate the repository every call goes to */
    public DelegatingRecordRepository(RecordRepository delegate) {
        this.delegate = delegate;
    }

    @Override
    public Record get(byte[] key) {
        return delegate.get(key);
    }

    @Override
    public boolean upsert(byte[] key, Record record) {
        return delegate.upsert(key, record);
    }

    @Override
    public boolean purge(byte[] key, Record expected) {
        return delegate.purge(key, expected);
    }

    @Override
    public void compact(byte[] start, byte[] end) {
        delegate.compact(start, end);
    }

    @Override
    public Cursor range(byte[] start, byte[] end) {
        return delegate.range(start, end);
    }

    @Override
    public long sizeOnDiskBytes() {
        return delegate.sizeOnDiskBytes();
    }

    @Override
    public boolean isOpen() {
        return delegate.isOpen();
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
