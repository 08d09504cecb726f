package dev.dht.storage;

import java.io.IOException;

/**
 * A {@link RecordRepository} that refuses writes ({@code OverloadedException} with reason {@code DISK_FULL},
 * answered 503) while the data dir's file system has less usable space than its {@link FreeSpaceReserve} (why: see
 * there), and lets them through again as soon as space is freed. Purges are writes too and are refused the same
 * way; a {@link #compact} below the reserve is skipped (it needs room for its output). Reads are unaffected.
 * Blocking as the delegate is (plus at most one {@code statvfs} per write); thread-safe as the delegate is.
 */
public final class FreeSpaceReserveRepository extends ForwardingRecordRepository {
    private final FreeSpaceReserve reserve;

    /** {@code delegate} behind {@code reserve}. */
    public FreeSpaceReserveRepository(RecordRepository delegate, FreeSpaceReserve reserve) {
        super(delegate);
        this.reserve = reserve;
    }

    /** {@inheritDoc} Refused below the reserve (nothing written). */
    @Override
    public boolean upsert(byte[] key, Record record) {
        reserve.require();
        return super.upsert(key, record);
    }

    /** {@inheritDoc} Refused below the reserve (nothing purged). */
    @Override
    public boolean purge(byte[] key, Record expected) {
        reserve.require();
        return super.purge(key, expected);
    }

    /** {@inheritDoc} Skipped below the reserve. */
    @Override
    public void compact(byte[] start, byte[] end) {
        if (reserve.isKept()) {
            super.compact(start, end);
        }
    }
}
