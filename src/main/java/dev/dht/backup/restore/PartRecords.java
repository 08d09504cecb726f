package dev.dht.backup.restore;

import dev.dht.backup.format.BackupFileReader;
import dev.dht.backup.format.BackupFileWriter.FileSummary;
import dev.dht.backup.location.BackupLocation;
import dev.dht.storage.KeyedRecord;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The records of one member's part of a backup: its files read one after the other, each verified as it is read
 * ({@link BackupFileReader}: checksums, length, SHA-256 against the manifest). One file is open at a time. Blocking.
 */
final class PartRecords implements Iterator<KeyedRecord>, Closeable {
    private final BackupLocation location;
    private final String backupId;
    private final Iterator<FileSummary> files;
    private BackupFileReader current;

    PartRecords(BackupLocation location, String backupId, List<FileSummary> files) {
        this.location = location;
        this.backupId = backupId;
        this.files = files.iterator();
    }

    @Override
    public boolean hasNext() {
        while (current == null || !current.hasNext()) {
            if (current != null) {
                current.close();
                current = null;
            }
            if (!files.hasNext()) {
                return false;
            }
            FileSummary file = files.next();
            try {
                current = new BackupFileReader(backupId + "/" + file.name(), location.open(backupId, file.name()),
                        file.sha256());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open " + backupId + "/" + file.name() + " at "
                        + location.describe() + ": " + e, e);
            }
        }
        return true;
    }

    @Override
    public KeyedRecord next() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more records");
        }
        return current.next();
    }

    @Override
    public void close() {
        if (current != null) {
            current.close();
        }
    }
}
