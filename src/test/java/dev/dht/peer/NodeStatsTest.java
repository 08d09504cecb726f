package dev.dht.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

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
