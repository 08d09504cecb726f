package dev.dht.backup;

import dev.dht.backup.location.BackupLocation;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.NoSuchFileException;
import java.util.List;

/**
 * The location of a node without {@code dht.backup.location}: it holds no backups and refuses to write one
 * ({@link BackupRefusedException}, 409).
 */
public final class UnconfiguredLocation implements BackupLocation {
    private static final String WHY = "no dht.backup.location is set on this node";

    @Override
    public OutputStream create(String id, String name) {
        throw new BackupRefusedException(WHY);
    }

    @Override
    public void abort(OutputStream stream) {
    }

    @Override
    public InputStream open(String id, String name) throws NoSuchFileException {
        throw new NoSuchFileException(id + "/" + name);
    }

    @Override
    public List<String> backupIds() {
        return List.of();
    }

    @Override
    public void delete(String id) {
    }

    @Override
    public String describe() {
        return "(none)";
    }
}
