package dev.dht.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A node's stats answer as text: it decodes to what was encoded (an uncounted store as {@code records ?}), lines a
 * newer node adds are skipped, and an answer without its bytes line, or with a number that is none, is refused.
 */
class NodeStatsTest {

    @Test
    void statsTravelAsTextAndBack() {
        NodeStats counted = new NodeStats(1234L, 56_789, Map.of("http://dht-1.dht:8080", 7L));
        NodeStats uncounted = new NodeStats(null, 0, Map.of());

        assertThat(NodeStats.decode(counted.encode())).isEqualTo(counted);
        assertThat(counted.encode()).isEqualTo("records 1234\nbytes 56789\nhints http://dht-1.dht:8080 7\n");
        assertThat(NodeStats.decode(uncounted.encode())).isEqualTo(uncounted);
        assertThat(NodeStats.decode("records 1\nbytes 2\nlater-field x y\n")).isEqualTo(new NodeStats(1L, 2, Map.of()));
    }

    @Test
    void aMalformedAnswerIsRefused() {
        assertThatThrownBy(() -> NodeStats.decode("records 1\n")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no bytes line");
        assertThatThrownBy(() -> NodeStats.decode("records x\nbytes 1\n")).isInstanceOf(IllegalArgumentException.class);
    }
}
