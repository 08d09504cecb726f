package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A cluster view survives a restart through its file, and a change of membership raises the epoch. */
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

        ClusterView view = new ClusterView(7, 3, List.of(new Member(A, MemberState.NORMAL),
                new Member(B, MemberState.LEAVING), new Member(C, MemberState.JOINING)));
        file.write(view);

        assertThat(new ClusterViewFile(dataDir).read()).contains(view);
    }

    @Test
    void theSameMembersKeepTheEpochAndOtherMembersTakeTheNextOne() {
        ClusterView first = ClusterView.initial(List.of(A, B, C), 3);
        assertThat(first.epoch()).isEqualTo(1);
        assertThat(first.count(MemberState.NORMAL)).isEqualTo(3);

        assertThat(first.successor(List.of(A, B, C), 3)).isSameAs(first);
        ClusterView smaller = first.successor(List.of(A, B), 3);
        assertThat(smaller.epoch()).isEqualTo(2);
        assertThat(smaller.nodes()).containsExactly(A, B);
        assertThat(first.successor(List.of(A, B, C), 2).epoch()).as("another replication factor").isEqualTo(2);
        assertThat(first.successor(List.of(B, A, C), 3).epoch()).as("another order places keys otherwise").isEqualTo(2);
    }

    @Test
    void aMalformedFileIsRefusedWithItsName() throws Exception {
        Files.writeString(dataDir.resolve(ClusterViewFile.FILE_NAME), "epoch 1\nmember http://a:8080 SLEEPING\n");

        assertThatThrownBy(() -> new ClusterViewFile(dataDir).read())
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(ClusterViewFile.FILE_NAME);
    }

    @Test
    void aViewHasMembersListedOnceAndAnEpochFromOne() {
        assertThatThrownBy(() -> ClusterView.initial(List.of(A, A), 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ClusterView(0, 3, List.of(new Member(A, MemberState.NORMAL))))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
