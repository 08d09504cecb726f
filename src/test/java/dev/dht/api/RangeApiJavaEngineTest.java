package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.config.DhtProperties;
import dev.dht.storage.StorageEngine;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/** The {@link RangeApiTest} tests on a node with the pure-Java LevelDB port ({@code dht.storage.engine=java}). */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "dht.storage.engine=java")
@DirtiesContext
class RangeApiJavaEngineTest extends RangeApiTest {

    @Autowired
    DhtProperties properties;

    @Test
    void nodeRunsOnThePureJavaEngine() {
        assertThat(properties.storage().engine()).isEqualTo(StorageEngine.JAVA);
    }
}
