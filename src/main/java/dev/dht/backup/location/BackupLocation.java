package dev.dht.backup.location;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.NoSuchFileException;
import java.util.List;

/**
 * A place that holds backups: each backup is a folder (a directory or a key prefix) named by its id, holding its
 * manifest and member files. Implementations are thread-safe; every method blocks on I/O, so call them only from
 * threads that may block (the backup scheduler, the restore command), never from an event loop.
 */
public interface BackupLocation {

    /**
     * A stream that writes the file {@code name} of backup {@code id}. The file appears whole once the stream is
     * closed (a temporary file renamed, or a multipart upload completed); a stream abandoned by {@link #abort}, or a
     * process killed mid-write, leaves no file under the name. Writing an existing name replaces it.
     *
     * @throws IOException if the location cannot be written
     */
    OutputStream create(String id, String name) throws IOException;

    /**
     * Abandons a stream of {@link #create} without making its file appear; no-op if it was closed.
     */
    void abort(OutputStream stream);

    /**
     * The file {@code name} of backup {@code id}.
     *
     * @throws NoSuchFileException if there is none
     * @throws IOException         if the location cannot be read
     */
    InputStream open(String id, String name) throws IOException;

    /** The ids of the backups that have a manifest, in no particular order. */
    List<String> backupIds() throws IOException;

    /**
     * Deletes every file of backup {@code id}, its manifest last (a delete cut short leaves the backup listed, so it
     * can be deleted again); no-op if there is none.
     */
    void delete(String id) throws IOException;

    /** The location as configured, for messages ({@code file:/backups}, {@code s3://bucket/prefix}). */
    String describe();
}
