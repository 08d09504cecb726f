package dev.dht.testing;

import dev.dht.LocalCertificateAuthority;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A cluster's TLS material for tests: a throw-away CA ({@link LocalCertificateAuthority}) and a node certificate for
 * {@code localhost} and {@code 127.0.0.1} in PEM files under a directory, the node settings that make them the SSL
 * bundle {@code dht} (reloaded on change, checked every 100 ms after a 1-s quiet period), and client-side
 * {@link SSLContext}s that trust the CA and present a certificate or none.
 */
public final class ClusterTls {
    /** The bundle name of the node settings. */
    public static final String BUNDLE = "dht";
    /** Names the node certificates are for. */
    public static final List<String> LOCAL_NAMES = List.of("localhost", "127.0.0.1");

    private final LocalCertificateAuthority authority;
    private final Path dir;
    private final LocalCertificateAuthority.Issued node;

    private ClusterTls(LocalCertificateAuthority authority, Path dir) {
        this.authority = authority;
        this.dir = dir;
        this.node = authority.issue(LOCAL_NAMES, Duration.ofDays(1));
        authority.writeCertificate(caFile());
        node.writeTo(certificateFile(), keyFile());
    }

    /** A new CA named {@code CN=dht test CA} and a node certificate, written under {@code dir}. */
    public static ClusterTls create(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ClusterTls(LocalCertificateAuthority.create("dht test CA", Duration.ofDays(1)), dir);
    }

    /** The cluster's CA. */
    public LocalCertificateAuthority authority() {
        return authority;
    }

    /** The node certificate and key in the files. */
    public LocalCertificateAuthority.Issued node() {
        return node;
    }

    public Path caFile() {
        return dir.resolve("ca.crt");
    }

    public Path certificateFile() {
        return dir.resolve("node.crt");
    }

    public Path keyFile() {
        return dir.resolve("node.key");
    }

    /** Node settings: the bundle of these files, TLS on with {@code clientAuth} (none, want, need). */
    public Map<String, String> nodeSettings(String clientAuth) {
        return nodeSettings(certificateFile(), keyFile(), clientAuth);
    }

    /** Node settings with another certificate and key file (the same CA file). */
    public Map<String, String> nodeSettings(Path certificate, Path key, String clientAuth) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("spring.ssl.bundle.pem.dht.keystore.certificate", "file:" + certificate);
        settings.put("spring.ssl.bundle.pem.dht.keystore.private-key", "file:" + key);
        settings.put("spring.ssl.bundle.pem.dht.truststore.certificate", "file:" + caFile());
        settings.put("spring.ssl.bundle.pem.dht.reload-on-update", "true");
        settings.put("spring.ssl.bundle.watch.file.quiet-period", "1s");
        settings.put("dht.tls.bundle", BUNDLE);
        settings.put("dht.tls.client-auth", clientAuth);
        return settings;
    }

    /** A client context that trusts this CA and presents the node certificate. */
    public SSLContext clientContext() {
        return context(authority.certificate(), node);
    }

    /** A client context that trusts this CA and presents no certificate. */
    public SSLContext anonymousContext() {
        return context(authority.certificate(), null);
    }

    /** A client context that trusts {@code trusted} and presents {@code presented} (null: none). */
    public static SSLContext context(X509Certificate trusted, LocalCertificateAuthority.Issued presented) {
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", trusted);
            TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trust);
            KeyManagerFactory keyManagers = null;
            if (presented != null) {
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry("node", presented.privateKey(), new char[0],
                        new Certificate[] {presented.certificate()});
                keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                keyManagers.init(keys, new char[0]);
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers == null ? null : keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
