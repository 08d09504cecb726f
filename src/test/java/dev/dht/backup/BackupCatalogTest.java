package dev.dht.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.location.BackupLocation;
import dev.dht.backup.location.FileBackupLocation;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalog publishes a manifest only once it was written whole: a write that fails mid-way (the location's
 * stream fails, as on a full disk) leaves no manifest, and over an existing one leaves that one as it was.
 * Retention keeps the chain of a kept incremental backup, and a base an incremental needs cannot be deleted.
 */
class BackupCatalogTest {
    @TempDir
    Path root;

    @Test
    void aManifestWhoseWriteFailsIsNotPublished() {
        FailingWrites location = new FailingWrites(new FileBackupLocation(root));
        BackupCatalog catalog = new BackupCatalog(location, 3,
                Clock.fixed(Instant.parse("2026-11-29T06:00:10Z"), ZoneOffset.UTC));
        BackupManifest running = manifest("20261129T060000Z-0001", BackupManifest.RUNNING);
        BackupManifest other = manifest("20261129T060000Z-0002", BackupManifest.RUNNING);
        catalog.write(running);

        location.failing = true;
        assertThatThrownBy(() -> catalog.write(other)).isInstanceOf(UncheckedIOException.class);
        assertThatThrownBy(() -> catalog.write(running.ended(BackupManifest.DONE, null, "2026-11-29T06:01:00Z",
                List.of(), List.of()))).isInstanceOf(UncheckedIOException.class);

        assertThat(catalog.read(other.id())).as("a manifest that failed mid-write").isEmpty();
        assertThat(catalog.read(running.id())).as("the manifest before the failed rewrite").contains(running);
    }

    @Test
    void retentionKeepsTheChainOfAKeptIncrementalAndABaseItNeedsCannotBeDeleted() {
        BackupCatalog catalog = new BackupCatalog(new FileBackupLocation(root), 2,
                Clock.fixed(Instant.parse("2026-11-29T06:00:10Z"), ZoneOffset.UTC));
        BackupManifest oldFull = done("20261125T000000Z-0001", null);
        BackupManifest full = done("20261126T000000Z-0002", null);
        BackupManifest first = done("20261127T000000Z-0003", full.id());
        BackupManifest failed = manifest("20261127T120000Z-0004", BackupManifest.FAILED);
        BackupManifest second = done("20261128T000000Z-0005", first.id());
        BackupManifest third = done("20261129T000000Z-0006", second.id());
        for (BackupManifest manifest : List.of(oldFull, full, first, failed, second, third)) {
            catalog.write(manifest);
        }

        catalog.applyRetention();

        assertThat(catalog.list()).as("keep 2: the two newest, and the chain the newest restores with")
                .extracting(BackupManifest::id)
                .containsExactly(third.id(), second.id(), first.id(), full.id());
        assertThatThrownBy(() -> catalog.delete(full.id())).isInstanceOf(BackupRefusedException.class)
                .hasMessageContaining("base of incremental backup " + first.id());
        assertThat(catalog.delete(third.id())).as("the newest incremental, which nothing needs").isTrue();
    }

    private static BackupManifest done(String id, String base) {
        return new BackupManifest(BackupFileFormat.VERSION, id, BackupManifest.DONE, null, "2026-11-29T06:00:00Z",
                "2026-11-29T06:00:01Z", 1, 3, List.of("http://a:8080"), List.of(), List.of(), null, null, List.of(),
                base, base == null ? null : "2026-11-29T05:59:00Z", null);
    }

    private static BackupManifest manifest(String id, String state) {
        return new BackupManifest(BackupFileFormat.VERSION, id, state, null, "2026-11-29T06:00:00Z", null, 1, 3,
                List.of("http://a:8080"), List.of(), List.of());
    }

    /** A location whose streams fail on their first write while {@link #failing}, as on a full disk. */
    private static final class FailingWrites implements BackupLocation {
        private final BackupLocation location;
        volatile boolean failing;

        FailingWrites(BackupLocation location) {
            this.location = location;
        }

        @Override
        public OutputStream create(String id, String name) throws IOException {
            return new Failing(location.create(id, name), failing);
        }

        @Override
        public void abort(OutputStream stream) {
            location.abort(stream instanceof Failing failing ? failing.inner() : stream);
        }

        @Override
        public InputStream open(String id, String name) throws IOException {
            return location.open(id, name);
        }

        @Override
        public List<String> backupIds() throws IOException {
            return location.backupIds();
        }

        @Override
        public void delete(String id) throws IOException {
            location.delete(id);
        }

        @Override
        public String describe() {
            return location.describe();
        }
    }

    private static final class Failing extends FilterOutputStream {
        private final boolean failing;

        Failing(OutputStream out, boolean failing) {
            super(out);
            this.failing = failing;
        }

        OutputStream inner() {
            return out;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (failing) {
                throw new IOException("No space left on device");
            }
            out.write(b, off, len);
        }
    }
}
