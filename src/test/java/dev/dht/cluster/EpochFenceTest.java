package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What a replica's {@link EpochFence} admits through a join of a fourth node that is rolled back past the read switch
 * (epochs 1 to 6): a call placed under an older view is refused only when a step since moved its key's replica sets,
 * and admitted when every step since left that key's sets as they were (the streaming step, a key the joiner does
 * not reach, a key read or written with fewer replicas than the joiner's rank).
 */
class EpochFenceTest {
    private static final List<URI> NODES = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"));
    private static final URI JOINER = URI.create("http://x:8080");
    private static final URI SELF = NODES.get(1);

    /** Epochs 1 to 6: settled, join started, streaming, read switch, rollback, settled again without the joiner. */
    private final List<ClusterView> views = views();

    private static List<ClusterView> views() {
        List<ClusterView> views = new ArrayList<>();
        views.add(ClusterView.initial(NODES, 3));
        views.add(views.get(0).withJoining(JOINER));
        views.add(views.get(1).advanced());
        views.add(views.get(2).advanced());
        views.add(views.get(3).aborted());
        views.add(views.get(4).advanced());
        return views;
    }

    private ClusterView view(long epoch) {
        return views.get((int) epoch - 1);
    }

    /** A fence that took the views from epoch 1 up to {@code epoch} one by one. */
    private EpochFence fenceAt(long epoch) {
        EpochFence fence = new EpochFence(new Placement(view(1), SELF));
        for (long e = 2; e <= epoch; e++) {
            fence.adopted(new Placement(view(e), SELF));
        }
        return fence;
    }

    /** The first key whose replicas at {@code from} the joiner enters ({@code moved}) or not. */
    private byte[] key(int from, boolean moved) {
        Placement joining = new Placement(view(2), SELF);
        Predicate<byte[]> movedBy = key -> !joining.oldReplicas(key, from).equals(joining.newReplicas(key, from));
        return IntStream.range(0, 10_000).mapToObj(i -> ("k" + i).getBytes(StandardCharsets.UTF_8))
                .filter(key -> movedBy.test(key) == moved).findFirst().orElseThrow();
    }

    @Test
    void aCallFromBeforeTheRollbackIsRefusedForAKeyWhoseSetsItMoved() {
        EpochFence fence = fenceAt(6);
        byte[] moved = key(2, true);

        assertThat(view(4).change().readsNew()).as("epoch 4 reads the new sets").isTrue();
        assertThat(fence.admits(4, moved, 2)).as("read switch, rolled back since").isFalse();
        assertThat(fence.admits(5, moved, 2)).as("the rollback step, ended since").isFalse();
        assertThat(fence.admits(1, moved, 2)).as("before the join: the same sets as now")
                .isTrue();
        assertThat(fence.admits(6, moved, 2)).isTrue();
        assertThat(fence.admits(0, moved, 2)).as("a caller that names no epoch").isTrue();
    }

    @Test
    void aKeyTheChangeLeftAsItWasIsServedUnderAnyOfItsViews() {
        EpochFence fence = fenceAt(6);
        byte[] untouched = key(2, false);

        for (long epoch = 1; epoch <= 6; epoch++) {
            assertThat(fence.admits(epoch, untouched, 2)).as("epoch %d", epoch).isTrue();
        }
    }

    @Test
    void theStreamingStepMovesNoSets() {
        EpochFence fence = fenceAt(3);
        byte[] moved = key(2, true);

        assertThat(fence.admits(2, moved, 2)).as("write-both-read-old -> streaming").isTrue();
        assertThat(fence.admits(1, moved, 2)).as("before the join started: its writes miss the joiner").isFalse();
        assertThat(fence.admitsRange(1)).as("a range reads every member; the joiner holds nothing alone yet").isTrue();
    }

    @Test
    void aFromTheJoinerDoesNotReachIsServed() {
        EpochFence fence = fenceAt(6);
        Placement joining = new Placement(view(2), SELF);
        byte[] key = IntStream.range(0, 10_000).mapToObj(i -> ("k" + i).getBytes(StandardCharsets.UTF_8))
                .filter(k -> joining.oldReplicas(k, 1).equals(joining.newReplicas(k, 1))
                        && !joining.oldReplicas(k, 3).equals(joining.newReplicas(k, 3)))
                .findFirst().orElseThrow();

        assertThat(fence.admits(4, key, 1)).as("one replica, not the joiner").isTrue();
        assertThat(fence.admits(4, key, 3)).as("three replicas, the joiner among them").isFalse();
        assertThat(fence.admits(4, key, 0)).as("from unknown: every member counts").isFalse();
    }

    @Test
    void aRangeFromBeforeACompletedJoinIsRefused() {
        EpochFence fence = fenceAt(4);
        fence.adopted(new Placement(view(4).advanced(), SELF)); // epoch 5: the joiner NORMAL

        assertThat(fence.admitsRange(4)).as("read switch: every member of epoch 5 in it").isTrue();
        assertThat(fence.admitsRange(1)).as("before the join: misses the joiner, which may hold a 1/1 write alone")
                .isFalse();
        assertThat(fence.admitsRange(5)).isTrue();
    }

    @Test
    void aNodeThatSkippedEpochsRefusesWhatItCannotCompare() {
        EpochFence fence = new EpochFence(new Placement(view(1), SELF));
        fence.adopted(new Placement(view(6), SELF));
        byte[] untouched = key(2, false);

        assertThat(fence.admits(4, untouched, 2)).as("epoch 4 never held here").isFalse();
        assertThat(fence.admits(1, untouched, 2)).as("epoch 1 held, same sets").isTrue();
        assertThat(fence.admitsRange(4)).isFalse();
        assertThat(fence.epoch()).isEqualTo(6);
    }
}
