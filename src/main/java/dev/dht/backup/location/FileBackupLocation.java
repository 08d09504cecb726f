package dev.dht.backup.location;

import dev.dht.backup.format.BackupManifest;
import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Backups in a directory ({@code file:/path}), local or a mounted volume every node shares: {@code ROOT/ID/NAME}.
 * A file is written as {@code .NAME.partial}, fsync'ed and renamed on close, so a crash never leaves a file that
 * looks whole. Blocking: disk I/O in every method.
 */
public final class FileBackupLocation implements BackupLocation {
    private static final String PARTIAL = ".partial";
    private final Path root;

    /** Backups under {@code root} (created on first write). */
    public FileBackupLocation(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    @Override
    public OutputStream create(String id, String name) throws IOException {
        Path folder = folder(id);
        Files.createDirectories(folder);
        Path target = folder.resolve(checkName(name));
        Path partial = folder.resolve("." + name + PARTIAL);
        FileChannel channel = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        return new PartialFile(channel, partial, target);
    }

    @Override
    public void abort(OutputStream stream) {
        if (stream instanceof PartialFile partial) {
            partial.abort();
        }
    }

    @Override
    public InputStream open(String id, String name) throws IOException {
        return Files.newInputStream(folder(id).resolve(checkName(name)));
    }

    @Override
    public List<String> backupIds() throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        try (Stream<Path> folders = Files.list(root)) {
            folders.filter(folder -> Files.isRegularFile(folder.resolve(BackupManifest.FILE_NAME)))
                    .forEach(folder -> ids.add(folder.getFileName().toString()));
        }
        return ids;
    }

    /** Deletes the member files first and {@code manifest.json} last, so a delete cut short leaves a listed backup. */
    @Override
    public void delete(String id) throws IOException {
        Path folder = folder(id);
        if (!Files.exists(folder)) {
            return;
        }
        Path manifest = folder.resolve(BackupManifest.FILE_NAME);
        try (Stream<Path> files = Files.walk(folder)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                if (!path.equals(manifest) && !path.equals(folder)) {
                    Files.deleteIfExists(path);
                }
            }
        }
        Files.deleteIfExists(manifest);
        Files.deleteIfExists(folder);
    }

    @Override
    public String describe() {
        return "file:" + root;
    }

    private Path folder(String id) {
        return root.resolve(checkName(id));
    }

    /** Ids and names are single path segments: no separator, no dot-segment. */
    static String checkName(String name) {
        if (name.isEmpty() || name.contains("/") || name.contains("\\") || name.startsWith(".")) {
            throw new IllegalArgumentException("not a backup id or file name: '" + name + "'");
        }
        return name;
    }

    /**
     * A file written under a temporary name, fsync'ed and moved into place on close. A close that fails (a flush,
     * the fsync or the rename) removes the temporary file and leaves nothing under the name; the stream is then
     * abandoned, and a second close fails too rather than look like a success.
     */
    private static final class PartialFile extends FilterOutputStream {
        private final FileChannel channel;
        private final Path partial;
        private final Path target;
        private boolean published;
        private boolean abandoned;

        PartialFile(FileChannel channel, Path partial, Path target) {
            super(new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16));
            this.channel = channel;
            this.partial = partial;
            this.target = target;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            if (published) {
                return;
            }
            if (abandoned) {
                throw new IOException(target + " was abandoned, not written");
            }
            try {
                out.flush();
                channel.force(true);
                out.close();
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException | RuntimeException e) {
                abort();
                throw e;
            }
            published = true;
        }

        void abort() {
            if (published || abandoned) {
                return;
            }
            abandoned = true;
            try {
                channel.close();
            } catch (IOException ignored) {
                // abandoned anyway
            }
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // a stale .partial file is never read as a backup file
            }
        }
    }
}
