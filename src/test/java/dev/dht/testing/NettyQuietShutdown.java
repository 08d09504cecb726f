package dev.dht.testing;

import java.time.Duration;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Test nodes stop their Netty event loops without the quiet period (Netty's default 2 s, for which a loop waits for
 * tasks submitted late before it ends): a stopped test node takes milliseconds instead of 2 s, and cluster tests stop
 * and start nodes hundreds of times. The web server's graceful shutdown before it (in-flight requests finish) is
 * unchanged; the packaged node and the ITs keep the default.
 */
final class NettyQuietShutdown implements BeanPostProcessor {
    static final NettyQuietShutdown INSTANCE = new NettyQuietShutdown();

    private NettyQuietShutdown() {
    }

    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        if (bean instanceof ReactorResourceFactory resources) {
            resources.setShutdownQuietPeriod(Duration.ZERO);
        }
        return bean;
    }
}
