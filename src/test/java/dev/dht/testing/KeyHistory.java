package dev.dht.testing;

import java.util.BitSet;

/**
 * What one key was written, by its only writer: a version number per write or delete, in order; which of them are
 * deletes; and the latest one acknowledged. A read is correct if it returns the latest version acknowledged before it
 * started, or any later one (an unacknowledged write may have been applied).
 */
public final class KeyHistory {
    private final String id;
    private final String replicas;
    private final boolean cold;
    private final BitSet deletes = new BitSet();
    private int issued;
    private volatile int acknowledged;

    /**
     * @param replicas the key's {@code replicas} parameter (ack/from), for its writes and reads
     * @param cold     true if the load leaves the key alone after the preload
     */
    public KeyHistory(String id, String replicas, boolean cold) {
        this.id = id;
        this.replicas = replicas;
        this.cold = cold;
    }

    /** The key's id. */
    public String id() {
        return id;
    }

    /** The {@code replicas} parameter (ack/from) of the key's requests. */
    public String replicas() {
        return replicas;
    }

    /** True if the load leaves the key alone after the preload. */
    public boolean cold() {
        return cold;
    }

    /** The {@code from} of {@link #replicas()}: how many replicas hold the key. */
    public int from() {
        return Integer.parseInt(replicas.substring(replicas.indexOf('/') + 1));
    }

    /** The next version, a delete or a value. */
    public synchronized int issue(boolean delete) {
        issued++;
        deletes.set(issued, delete);
        return issued;
    }

    /** Records that {@code version} was acknowledged (201 or 202). */
    public synchronized void acknowledge(int version) {
        acknowledged = Math.max(acknowledged, version);
    }

    /** The latest version acknowledged, 0 if none. */
    public int acknowledged() {
        return acknowledged;
    }

    /** The value written as {@code version}. */
    public String value(int version) {
        return id + "#" + version + "#" + "x".repeat(40);
    }

    /** The version of a value read, or -2 if the value is not one of this key's. */
    public int version(String value) {
        String[] parts = value.split("#");
        return parts.length == 3 && parts[0].equals(id) && parts[1].matches("[0-9]{1,9}")
                ? Integer.parseInt(parts[1]) : -2;
    }

    /**
     * Null if a read that started once {@code acknowledgedBefore} was the latest acknowledged version may return
     * {@code read} (a version, or -1 for absent), else what is wrong.
     */
    public synchronized String check(int acknowledgedBefore, int read) {
        boolean ok;
        if (read == -1) {
            int laterDelete = deletes.nextSetBit(Math.max(acknowledgedBefore, 1));
            ok = acknowledgedBefore == 0 || (laterDelete != -1 && laterDelete <= issued);
        } else {
            ok = read >= acknowledgedBefore && read >= 1 && read <= issued && !deletes.get(read);
        }
        if (ok) {
            return null;
        }
        return id + " (" + replicas + ") read " + (read == -1 ? "absent" : "version " + read)
                + " after version " + acknowledgedBefore + (deletes.get(acknowledgedBefore) ? " (a delete)" : "")
                + " was acknowledged; " + issued + " issued";
    }
}
