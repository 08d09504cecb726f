package dev.dht.config;

import dev.dht.peer.ReloadableSslContext;
import dev.dht.web.TlsHandshakeFailures;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.boot.web.server.ConfigurableWebServerFactory;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.NettyPipeline;

/**
 * TLS from a Spring Boot SSL bundle ({@code dht.tls.bundle}): HTTPS on the server port with the bundle's key and
 * certificate and {@code dht.tls.client-auth}, and the peer client ({@code PeerTransportConfiguration#replicaWebClient})
 * presenting the same certificate and trusting only the bundle's trust store, with host-name verification (Reactor
 * Netty's default for clients). When the bundle reloads (a PEM or JKS bundle with {@code reload-on-update: true}
 * whose files changed), Spring Boot swaps the server's certificate and this configuration the client's: new
 * handshakes use the new files, open connections keep theirs. Failed handshakes of either side are counted and
 * logged ({@link TlsHandshakeFailures}). The management port's TLS: {@link ManagementServerConfiguration}.
 *
 * <p>Settings are checked when the web server is created, before it listens: an unknown bundle, or node URLs whose
 * scheme does not match (https with TLS, http without), stop start-up with one line naming the setting.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(TlsProperties.class)
public class TlsConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(TlsConfiguration.class);
    /** Name of the {@link TlsHandshakeFailures} handler in a connection's pipeline. */
    static final String HANDSHAKE_FAILURES_HANDLER = "dht.tlsHandshakeFailures";

    /**
     * The checked TLS settings of this node: off, or on with a bundle that exists.
     *
     * @param properties the {@code dht.tls} settings
     * @param bundle     the bundle named by {@code dht.tls.bundle}; null when TLS is off
     */
    record TlsSettings(TlsProperties properties, SslBundle bundle) {
        boolean enabled() {
            return bundle != null;
        }

        /** A server-side {@link Ssl} of the bundle, with {@code clientAuth}. */
        Ssl ssl(Ssl.ClientAuth clientAuth) {
            Ssl ssl = Ssl.forBundle(properties.bundle());
            ssl.setClientAuth(clientAuth);
            return ssl;
        }
    }

    @Bean
    TlsSettings tlsSettings(TlsProperties tls, DhtProperties properties, SslBundles bundles) {
        checkNodeUrls(tls, properties.nodes());
        if (!tls.enabled()) {
            return new TlsSettings(tls, null);
        }
        List<String> names = bundles.getBundleNames();
        if (!names.contains(tls.bundle())) {
            throw new InvalidSettingException("dht.tls.bundle", "no SSL bundle named '" + tls.bundle()
                    + "': define spring.ssl.bundle.pem." + tls.bundle() + ".* or spring.ssl.bundle.jks."
                    + tls.bundle() + ".* (bundles defined: " + names + ")");
        }
        SslBundle bundle = bundles.getBundle(tls.bundle());
        if (tls.clientAuth() != Ssl.ClientAuth.NONE && bundle.getStores().getTrustStore() == null) {
            throw new InvalidSettingException("dht.tls.client-auth", "is " + tls.clientAuth().name()
                    .toLowerCase(Locale.ROOT) + " but SSL bundle '" + tls.bundle() + "' has no trust store: a client "
                    + "certificate would be checked against the JDK's public CAs, and any certificate one of them "
                    + "signed would pass as a peer; give the bundle the cluster's CA as its trust store");
        }
        return new TlsSettings(tls, bundle);
    }

    /** With TLS every node is reached over https, without it over http: a mix would only fail at run time. */
    private static void checkNodeUrls(TlsProperties tls, List<URI> nodes) {
        String expected = tls.enabled() ? "https" : "http";
        for (URI node : nodes) {
            if (!expected.equals(node.getScheme().toLowerCase(Locale.ROOT))) {
                throw new InvalidSettingException("dht.nodes", tls.enabled()
                        ? node + " is not https, but dht.tls.bundle turns TLS on: every node's URL must be https://"
                        : node + " is https, but TLS is off: set dht.tls.bundle, or use http://");
            }
        }
    }

    /** HTTPS on the server port, after Spring Boot's own customizer (which would apply {@code server.ssl.*}). */
    @Bean
    WebServerFactoryCustomizer<ConfigurableWebServerFactory> serverTls(TlsSettings tls, SslBundles bundles) {
        return factory -> {
            if (tls.enabled()) {
                factory.setSsl(tls.ssl(tls.properties().clientAuth()));
                factory.setSslBundles(bundles);
            }
        };
    }

    /** Counts and logs the server port's failed handshakes (garbage, plain HTTP, refused certificates). */
    @Bean
    NettyServerCustomizer serverTlsHandshakeFailures(TlsSettings tls, MeterRegistry registry) {
        if (!tls.enabled()) {
            return server -> server;
        }
        TlsHandshakeFailures failures = new TlsHandshakeFailures("server", registry);
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) -> addAfterSslHandler(channel, failures));
    }

    /**
     * TLS on the peer client: the bundle's key (this node's client certificate, for peers that ask for one) and
     * trust store (the cluster's CA), rebuilt when the bundle reloads; handshakes time out with the replica calls.
     */
    @Bean
    ReplicaClientCustomizer replicaClientTls(TlsSettings tls, SslBundles bundles, ReplicaClientProperties properties,
                                             MeterRegistry registry) {
        if (!tls.enabled()) {
            return client -> client;
        }
        ReloadableSslContext context = new ReloadableSslContext(clientContext(tls.bundle()));
        String name = tls.properties().bundle();
        bundles.addBundleUpdateHandler(name, updated -> {
            context.update(clientContext(updated));
            LOG.info("SSL bundle '{}' reloaded: new connections to peers use its new certificates", name);
        });
        TlsHandshakeFailures failures = new TlsHandshakeFailures("client", registry);
        return client -> client
                .secure(spec -> spec.sslContext(context).handshakeTimeout(properties.replicaTimeout()))
                .doOnChannelInit((observer, channel, remoteAddress) -> addAfterSslHandler(channel, failures));
    }

    /** A client context of {@code bundle}'s key and trust managers, protocols and ciphers. */
    static SslContext clientContext(SslBundle bundle) {
        SslOptions options = bundle.getOptions();
        try {
            return SslContextBuilder.forClient()
                    .keyManager(bundle.getManagers().getKeyManagerFactory())
                    .trustManager(bundle.getManagers().getTrustManagerFactory())
                    .protocols(options.getEnabledProtocols())
                    .ciphers(options.getCiphers() == null ? null : Arrays.asList(options.getCiphers()))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the peer client's TLS context from its SSL bundle", e);
        }
    }

    private static void addAfterSslHandler(Channel channel, TlsHandshakeFailures failures) {
        if (channel.pipeline().get(NettyPipeline.SslHandler) != null) {
            channel.pipeline().addAfter(NettyPipeline.SslHandler, HANDSHAKE_FAILURES_HANDLER, failures);
        }
    }
}
