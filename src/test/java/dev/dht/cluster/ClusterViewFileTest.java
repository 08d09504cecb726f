package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster view survives a restart through its file, and every step of a membership change is a view one epoch
 * higher: join and decommission phases, abort up to the read switch, one change at a time.
 */
class ClusterViewFileTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("http://c:8080");

    @TempDir
    Path dataDir;

    @Test
    void aNewDataDirHasNoViewAndAStoredOneReadsBackEqual() {
        ClusterViewFile file = new ClusterViewFile(dataDir);
        assertThat(file.read()).isEmpty();

        ClusterView view = ClusterView.initial(List.of(A, B), 3).withJoining(C).advanced();
        file.write(view);

        assertThat(new ClusterViewFile(dataDir).read()).contains(view);
        assertThat(view.change()).isEqualTo(new ClusterChange(ChangeKind.JOIN, C, ChangePhase.STREAMING));
    }

    @Test
    void theClusterIdIsStoredAndKeptByEveryStepAndAViewStoredWithoutOneHasTheLegacyId() {
        UUID id = UUID.randomUUID();
        ClusterView view = ClusterView.initial(List.of(A, B), 3, id).withJoining(C).advanced().aborted();
        assertThat(view.cluster()).isEqualTo(id);
        new ClusterViewFile(dataDir).write(view);
        assertThat(new ClusterViewFile(dataDir).read()).contains(view);

        String before = "epoch 4\nreplication-factor 3\nmember http://a:8080 NORMAL\nmember http://b:8080 NORMAL\n";
        assertThat(ClusterViewFile.decode(before).cluster()).isEqualTo(ClusterView.LEGACY_CLUSTER);
        assertThat(ClusterViewFile.encode(ClusterViewFile.decode(before))).as("written as the version before did")
                .isEqualTo(before);
    }

    @Test
    void aJoinGoesThroughItsPhasesOneEpochEachAndEndsNormal() {
        ClusterView first = ClusterView.initial(List.of(A, B), 3);
        ClusterView joining = first.withJoining(C);
        assertThat(joining.epoch()).isEqualTo(2);
        assertThat(joining.state(C)).contains(MemberState.JOINING);
        assertThat(joining.change().phase()).isEqualTo(ChangePhase.WRITE_BOTH_READ_OLD);
        ClusterView streaming = joining.advanced();
        ClusterView readNew = streaming.advanced();
        assertThat(readNew.change().readsNew()).isTrue();
        ClusterView done = readNew.advanced();
        assertThat(done.epoch()).isEqualTo(5);
        assertThat(done.change()).isNull();
        assertThat(done.count(MemberState.NORMAL)).isEqualTo(3);
        assertThatThrownBy(done::advanced).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aDecommissionEndsWithoutTheLeaverAndOneChangeRunsAtATime() {
        ClusterView leaving = ClusterView.initial(List.of(A, B, C), 3).withLeaving(B, ChangeKind.DECOMMISSION);
        assertThat(leaving.state(B)).contains(MemberState.LEAVING);
        assertThatThrownBy(() -> leaving.withJoining(URI.create("http://d:8080")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("decommission of " + B);
        ClusterView done = leaving.advanced().advanced().advanced();
        assertThat(done.nodes()).containsExactly(A, C);
        assertThat(done.isMember(B)).isFalse();
    }

    @Test
    void anAbortUndoesTheChangeAtEveryPhaseThroughARollbackPhaseAfterTheReadSwitch() {
        ClusterView first = ClusterView.initial(List.of(A, B), 3);
        ClusterView abortedJoin = first.withJoining(C).advanced().aborted();
        assertThat(abortedJoin.nodes()).containsExactly(A, B);
        assertThat(abortedJoin.epoch()).isEqualTo(4);
        ClusterView abortedLeave = first.withLeaving(B, ChangeKind.DECOMMISSION).aborted();
        assertThat(abortedLeave.members()).containsExactly(new Member(A, MemberState.NORMAL),
                new Member(B, MemberState.NORMAL));
        ClusterView readsNew = first.withJoining(C).advanced().advanced();
        ClusterView rollingBack = readsNew.aborted();
        assertThat(rollingBack.change().phase()).isEqualTo(ChangePhase.ROLLBACK);
        assertThat(rollingBack.nodes()).containsExactly(A, B, C);
        ClusterView rolledBack = rollingBack.advanced();
        assertThat(rolledBack.nodes()).containsExactly(A, B);
        assertThat(rolledBack.change()).isNull();
        assertThat(rolledBack.epoch()).isEqualTo(readsNew.epoch() + 2);
        assertThatThrownBy(rollingBack::aborted).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rolled back already");
        ClusterView leaverBack = first.withLeaving(B, ChangeKind.DECOMMISSION).advanced().advanced().aborted()
                .advanced();
        assertThat(leaverBack.members()).containsExactly(new Member(A, MemberState.NORMAL),
                new Member(B, MemberState.NORMAL));
    }

    @Test
    void aDecommissionWhoseNodeDiedBecomesItsRemovalInTheSamePhase() {
        ClusterView streaming = ClusterView.initial(List.of(A, B, C), 3).withLeaving(C, ChangeKind.DECOMMISSION)
                .advanced();
        ClusterView removal = streaming.asRemovenode();
        assertThat(removal.change()).isEqualTo(new ClusterChange(ChangeKind.REMOVENODE, C, ChangePhase.STREAMING));
        assertThat(removal.epoch()).isEqualTo(streaming.epoch() + 1);
        assertThatThrownBy(() -> removal.asRemovenode()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aMalformedFileIsRefusedWithItsName() throws Exception {
        Files.writeString(dataDir.resolve(ClusterViewFile.FILE_NAME), "epoch 1\nmember http://a:8080 SLEEPING\n");

        assertThatThrownBy(() -> new ClusterViewFile(dataDir).read())
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(ClusterViewFile.FILE_NAME);
    }

    @Test
    void aViewHasMembersListedOnceAStateThatMatchesItsChangeAndNoNegativeEpoch() {
        assertThatThrownBy(() -> ClusterView.initial(List.of(A, A), 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClusterView(-1, 3, List.of(new Member(A, MemberState.NORMAL))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClusterView(2, 3, List.of(new Member(A, MemberState.NORMAL),
                new Member(B, MemberState.JOINING)))).as("joining without a join").isInstanceOf(IllegalArgumentException.class);
    }
}
