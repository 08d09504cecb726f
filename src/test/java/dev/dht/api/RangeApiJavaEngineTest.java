package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.config.DhtProperties;
import dev.dht.storage.StorageEngine;
import dev.dht.testing.SingleNodeTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** The {@link RangeApiTest} tests on a node with the pure-Java LevelDB port ({@code dht.storage.engine=java}). */
@SingleNodeTest(properties = "dht.storage.engine=java")
class RangeApiJavaEngineTest extends RangeApiTest {
    @Autowired
    DhtProperties properties;

    @Test
    void nodeRunsOnThePureJavaEngine() {
        assertThat(properties.storage().engine()).isEqualTo(StorageEngine.JAVA);
    }
}
