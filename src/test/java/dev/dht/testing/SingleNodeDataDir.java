package dev.dht.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.util.FileSystemUtils;

/**
 * The settings of a {@link SingleNodeTest}'s node: {@code dht.data-dir}, a fresh temp dir per context, deleted when
 * the context closes, after every other bean (the store) is closed; {@code dht.self} and {@code dht.nodes}
 * {@link SingleNodeSettings#SELF}; its Netty event loops stop without a quiet period ({@link NettyQuietShutdown}).
 */
final class SingleNodeDataDir implements ContextCustomizerFactory {
    @Override
    public ContextCustomizer createContextCustomizer(Class<?> testClass,
                                                     List<ContextConfigurationAttributes> configAttributes) {
        return new Customizer();
    }

    /** A record with no state, so that equal test configurations still share a cached context. */
    private record Customizer() implements ContextCustomizer {
        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
            Path dataDir;
            try {
                dataDir = Files.createTempDirectory("dht-single-node-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("singleNode", Map.of(
                    "dht.data-dir", dataDir.toString(),
                    "dht.self", SingleNodeSettings.SELF,
                    "dht.nodes", SingleNodeSettings.SELF)));
            context.getBeanFactory().addBeanPostProcessor(NettyQuietShutdown.INSTANCE);
            // registered before the context's own beans, so destroyed after them: the store is closed by then
            ((DefaultSingletonBeanRegistry) context.getBeanFactory()).registerDisposableBean("singleNodeDataDir",
                    () -> FileSystemUtils.deleteRecursively(dataDir));
        }
    }
}
