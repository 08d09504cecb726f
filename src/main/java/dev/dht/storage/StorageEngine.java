package dev.dht.storage;

import java.io.File;
import java.io.IOException;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.impl.Iq80DBFactory;

/**
 * Which LevelDB implementation backs the {@link LevelDbRecordRepository}; setting {@code dht.storage.engine}.
 * Both speak the same {@code org.iq80.leveldb} API and the same on-disk format.
 */
public enum StorageEngine {
    /** leveldbjni 1.8: Google's C++ LevelDB through JNI. Native library for x86-64 only. The default. */
    JNI,
    /** The pure-Java port (org.iq80.leveldb): slower, runs on any CPU (use it on ARM). */
    JAVA;

    /** The factory that opens databases with this engine; loading JNI fails on unsupported CPUs. */
    public DBFactory factory() {
        return this == JNI ? JniDBFactory.factory : Iq80DBFactory.factory;
    }

    /**
     * Opens (or creates, per {@code options}) a database with this engine. With JNI the process's first open runs
     * on a thread of its own so that LevelDB's background thread can be found later ({@link LevelDbBackgroundThread}).
     * Blocks (disk I/O).
     *
     * @throws IOException if LevelDB cannot open the database (for example another process holds its lock)
     */
    public DB open(File directory, Options options) throws IOException {
        return this == JNI ? LevelDbBackgroundThread.open(directory, options) : factory().open(directory, options);
    }
}
