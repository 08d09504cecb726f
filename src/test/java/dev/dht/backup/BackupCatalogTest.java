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
