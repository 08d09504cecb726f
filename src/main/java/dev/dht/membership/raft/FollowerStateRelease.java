package dev.dht.membership.raft;

import java.lang.reflect.Field;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.protocol.RaftPeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases a Raft server frozen by the promotion of a listener to a voter (Apache Ratis 3.2.2, RATIS-2378's change to
 * {@code ServerState.updateConfiguration}). When an append carries a configuration that makes a listener a voter,
 * the listener's server, holding its own lock, stops its {@code FollowerState} thread and waits for it to end
 * ({@code join}); if that thread had just woken from its election-timeout sleep, it waits to enter the same lock
 * ({@code synchronized (server)}), cannot end, and the server is frozen for good: it answers no append and no vote.
 * The log goes on while the other voters make a majority, and loses its leader for good when one of them dies
 * (a decommission held in its first phase, the leader stopped: the survivors never elected a leader, term 1). The
 * same wait under the lock was moved out of it elsewhere in Ratis (RATIS-2174); this one remains in Ratis 3.2.2.
 *
 * <p>{@link #releaseStuck()} finds this server's {@code FollowerState} threads that were told to stop and wait for
 * the lock, and on its second call in a row that finds the same thread, completes the future the server waits on:
 * the server goes on, and the old thread, once it gets the lock, sees it was stopped and ends. Nothing else changes;
 * a thread that gets the lock in between is no longer found. Reads Ratis's private fields by reflection: if a Ratis
 * version lacks them, it logs once and does nothing.
 *
 * <p>Not thread-safe: call from one thread (the view log's watchdog). Never blocks.
 */
final class FollowerStateRelease {
    private static final Logger log = LoggerFactory.getLogger(FollowerStateRelease.class);
    private static final String FOLLOWER_STATE = "org.apache.ratis.server.impl.FollowerState";
    private final String namePrefix;
    private Set<Thread> stuckBefore = Set.of();
    private Field running;
    private Field stopped;
    private boolean disabled;

    /** For the threads of the server {@code self} (their names start with its peer id and {@code @}). */
    FollowerStateRelease(RaftPeerId self) {
        this.namePrefix = self + "@";
    }

    /**
     * One check: releases each of this server's stopped {@code FollowerState} threads that waits for the server's
     * lock now and did at the previous check too.
     *
     * @return how many were released
     */
    int releaseStuck() {
        if (disabled) {
            return 0;
        }
        Set<Thread> stuck = new HashSet<>();
        int released = 0;
        for (Thread thread : followerStateThreads()) {
            if (thread.getState() != Thread.State.BLOCKED || !thread.getName().startsWith(namePrefix)
                    || !fieldsFound(thread.getClass())) {
                continue;
            }
            try {
                if (running.getBoolean(thread)) {
                    continue;
                }
                stuck.add(thread);
                if (stuckBefore.contains(thread)
                        && stopped.get(thread) instanceof CompletableFuture<?> future && !future.isDone()) {
                    future.complete(null);
                    released++;
                    log.warn("the view log's Raft server was frozen: it waited under its lock for its stopped "
                            + "follower thread {}, which waited for that lock (Ratis's promotion of a listener to a "
                            + "voter); released", thread.getName());
                }
            } catch (IllegalAccessException | RuntimeException e) {
                disable("cannot read " + FOLLOWER_STATE + ": " + e);
                return released;
            }
        }
        stuckBefore = stuck;
        return released;
    }

    /** The live {@code FollowerState} threads of every Raft server in this JVM. */
    static Set<Thread> followerStateThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() + 16];
        int count = root.enumerate(threads, true);
        Set<Thread> found = new HashSet<>();
        for (int i = 0; i < count; i++) {
            if (threads[i].getClass().getName().equals(FOLLOWER_STATE)) {
                found.add(threads[i]);
            }
        }
        return found;
    }

    private boolean fieldsFound(Class<?> followerState) {
        if (running != null) {
            return true;
        }
        try {
            Field isRunning = followerState.getDeclaredField("isRunning");
            Field stoppedFuture = followerState.getDeclaredField("stopped");
            isRunning.setAccessible(true);
            stoppedFuture.setAccessible(true);
            running = isRunning;
            stopped = stoppedFuture;
            return true;
        } catch (NoSuchFieldException | RuntimeException e) {
            disable("this Ratis version's " + FOLLOWER_STATE + " has no field " + e.getMessage());
            return false;
        }
    }

    private void disable(String why) {
        disabled = true;
        log.info("a Raft server frozen by a listener's promotion will not be released: {}", why);
    }
}
