package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.storage.ForwardingRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.testing.DhtClient;
import dev.dht.testing.SingleNodeTest;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * A single node whose own store fails a write with an error (here the {@code OutOfMemoryError: Java heap space}
 * that {@code Record.encode} throws on a storage thread when 40 bodies of 8 MB fill a 256 MB heap) answers 500 and
 * logs the error, and stores nothing: not 504 with no line in the log, as if a replica had timed out (nothing did).
 * A single node answers a write 504 never: it waits for its own store past the replica timeout.
 */
@ExtendWith(OutputCaptureExtension.class)
@SingleNodeTest
class LocalStoreErrorTest {
    /** Keys whose writes the store fails. */
    private static final String FAILING = "no-heap-";

    @LocalServerPort
    int port;

    @Test
    void aWriteItsOwnStoreFailsIs500AndLoggedNot504(CapturedOutput output) {
        DhtClient client = new DhtClient(URI.create("http://localhost:" + port));

        HttpResponse<byte[]> answer = client.send("PUT", "/v0/entity?id=" + FAILING + "1", bytes("value"));

        assertThat(answer.statusCode()).isEqualTo(500);
        String body = new String(answer.body(), StandardCharsets.UTF_8);
        EntityApiTest.assertOneLineError(body);
        assertThat(body).contains("store failed");
        assertThat(output.getOut()).contains(" ERROR ", "PUT /v0/entity failed", "OutOfMemoryError: Java heap space");
        assertThat(client.get(FAILING + "1", null).statusCode()).isEqualTo(404);
        assertThat(client.put("stored", "value", null)).as("other writes go on").isEqualTo(201);
        assertThat(client.get("stored", null).statusCode()).isEqualTo(200);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Wraps the node's store so that writes of {@link #FAILING} keys throw as a full heap does. */
    @TestConfiguration(proxyBeanMethods = false)
    static class HeapExhaustedWrites {
        @Bean
        static BeanPostProcessor failingLocalStore() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    if (!(bean instanceof LocalStore store)) {
                        return bean;
                    }
                    return new LocalStore(new ForwardingRecordRepository(store.repository()) {
                        @Override
                        public boolean upsert(byte[] key, Record record) {
                            if (new String(key, StandardCharsets.UTF_8).startsWith(FAILING)) {
                                throw new OutOfMemoryError("Java heap space");
                            }
                            return super.upsert(key, record);
                        }
                    }, store.scheduler(), store.clock());
                }
            };
        }
    }
}
