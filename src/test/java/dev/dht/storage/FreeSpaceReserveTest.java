package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * When the reserve asks the file system: far above the reserve it reuses an answer for 10 ms, so a disk that
 * fills is seen at the first check after that; near the reserve it asks on every check, so the first write
 * after the disk fills is refused. The real file system is {@link FreeSpaceReserveRepositoryTest} and DiskFullIT.
 */
class FreeSpaceReserveTest {
    private static final long RESERVE = 64L << 20;
    private final AtomicLong usable = new AtomicLong();
    private final AtomicLong nanos = new AtomicLong(1_000);
    private final AtomicLong statvfsCalls = new AtomicLong();
    private final FreeSpaceReserve reserve = new FreeSpaceReserve(RESERVE, () -> {
        statvfsCalls.incrementAndGet();
        return usable.get();
    }, nanos::get);

    @Test
    void farAboveTheReserveAnAnswerIsReusedForTenMillisecondsThenTheFullDiskIsRefused() {
        usable.set(RESERVE + FreeSpaceReserve.FAR_FROM_RESERVE_BYTES);
        reserve.require();
        usable.set(RESERVE - 1);   // the disk fills (by more than 1 GiB in under 10 ms: no real writer does)
        nanos.addAndGet(FreeSpaceReserve.RECHECK_NANOS - 1);
        reserve.require();
        assertThat(reserve.isKept()).isTrue();
        assertThat(statvfsCalls).hasValue(1);

        nanos.addAndGet(1);
        assertThatThrownBy(reserve::require).isInstanceOf(OverloadedException.class)
                .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
        assertThat(reserve.isKept()).isFalse();
        assertThat(statvfsCalls).hasValue(3);
    }

    @Test
    void nearTheReserveEveryCheckAsksTheFileSystemSoTheFirstWriteAfterTheDiskFillsIsRefused() {
        usable.set(RESERVE + FreeSpaceReserve.FAR_FROM_RESERVE_BYTES - 1);
        reserve.require();
        reserve.require();
        assertThat(statvfsCalls).hasValue(2);

        usable.set(RESERVE - 1);
        assertThatThrownBy(reserve::require).isInstanceOf(OverloadedException.class)
                .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL)
                .hasMessageContaining((RESERVE - 1) + " bytes usable");
        usable.set(RESERVE);
        reserve.require();
        assertThat(statvfsCalls).hasValue(4);
    }

    @Test
    void aFullDiskIsNotRememberedAsFar() {
        usable.set(RESERVE - 1);
        assertThatThrownBy(reserve::require).isInstanceOf(OverloadedException.class)
                .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
        assertThatThrownBy(reserve::require).isInstanceOf(OverloadedException.class)
                .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
        assertThat(statvfsCalls).hasValue(2);
    }
}
