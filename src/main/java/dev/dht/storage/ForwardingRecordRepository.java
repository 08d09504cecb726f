package dev.dht.storage;

import java.io.IOException;

/**
 * A {@link RecordRepository} that passes every call to another one: the base of the decorators (row cache,
 * free-space reserve), which override only the calls they change, as Guava's {@code Forwarding*} classes do. Tests
 * use it to watch or slow down calls. Blocking and thread-safe exactly as the delegate is.
 */
public class ForwardingRecordRepository implements RecordRepository {
    private final RecordRepository delegate;

    /** @param delegate the repository every call goes to */
    public ForwardingRecordRepository(RecordRepository delegate) {
        this.delegate = delegate;
    }

    /** The repository every call goes to. */
    protected final RecordRepository delegate() {
        return delegate;
    }

    @Override
    public Record get(byte[] key) {
        return delegate.get(key);
    }

    @Override
    public Record cached(byte[] key) {
        return delegate.cached(key);
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
