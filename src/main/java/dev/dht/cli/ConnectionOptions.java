package dev.dht.cli;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import picocli.CommandLine.Option;

/**
 * The options every command shares: which node to ask, the cluster secret, TLS and the output format. The secret is
 * never an argument (it would show in the shell's history and in {@code ps}): it comes from {@code --secret-file},
 * else {@code DHT_CLUSTER_SECRET}, else, for a node of a local cluster, from that cluster's secret file
 * ({@link LocalClusterSecret}).
 */
public final class ConnectionOptions {
    /** The node asked when neither {@code --host} nor {@code DHT_HOST} says. */
    public static final String DEFAULT_HOST = "http://localhost:8080";

    /** How a command prints its answer. */
    public enum Output {
        /** Text for a person. */
        table,
        /** The actuator's JSON document. */
        json
    }

    private final CliContext context;

    @Option(names = "--host", paramLabel = "URL", description = "The node to ask: its actuator's base URL, the "
            + "management port where that is separate (default: $DHT_HOST, else " + DEFAULT_HOST + ").")
    private String host;

    @Option(names = "--secret-file", paramLabel = "PATH", description = "A file holding the cluster secret (default:"
            + " $DHT_CLUSTER_SECRET; for a node of a local cluster, that cluster's secret under ./data/).")
    private Path secretFile;

    @Option(names = "--cacert", paramLabel = "PATH", description = "PEM certificates to trust for https:// (default: "
            + "$DHT_CACERT, else the JVM's trust store).")
    private Path caCertificate;

    @Option(names = "--cert", paramLabel = "PATH", description = "PEM client certificate, for nodes that need one "
            + "(dht.tls.client-auth=need); with --key (default: $DHT_CERT).")
    private Path clientCertificate;

    @Option(names = "--key", paramLabel = "PATH", description = "Unencrypted PKCS#8 PEM key of --cert (default: "
            + "$DHT_KEY).")
    private Path clientKey;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", description = "table or json (the actuator's "
            + "document); default table.")
    private Output output = Output.table;

    /** The options of a command run in {@code context} (made by {@link Dht}'s factory). */
    public ConnectionOptions(CliContext context) {
        this.context = context;
    }

    /** The node's actuator base URL, without a trailing slash. */
    public URI host() {
        String url = host != null ? host : context.environment().getOrDefault("DHT_HOST", DEFAULT_HOST);
        if (url.isBlank()) {
            url = DEFAULT_HOST;
        }
        URI uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
            throw new CliFailure(Dht.EXIT_REFUSED, "--host " + url + " is not an http:// or https:// URL");
        }
        return uri;
    }

    /** The output format. */
    public Output output() {
        return output;
    }

    /** The cluster secret, or null if none was given and none is found. Reads the secret file. */
    public String secret() {
        if (secretFile != null) {
            try {
                return Files.readString(secretFile, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new CliFailure(Dht.EXIT_REFUSED, "cannot read --secret-file " + secretFile + ": " + e);
            }
        }
        String fromEnvironment = context.environment().get("DHT_CLUSTER_SECRET");
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return fromEnvironment.strip();
        }
        return null;
    }

    /** The client of {@link #host()} with these options. */
    public ActuatorClient client() {
        return new ActuatorClient(host(), this::secret, sslContext(), context);
    }

    /**
     * The TLS context of {@code --cacert}, {@code --cert} and {@code --key} (or their environment defaults), or null
     * for the JVM's default.
     */
    public SSLContext sslContext() {
        Path ca = caCertificate != null ? caCertificate : pathFromEnvironment("DHT_CACERT");
        Path cert = clientCertificate != null ? clientCertificate : pathFromEnvironment("DHT_CERT");
        Path key = clientKey != null ? clientKey : pathFromEnvironment("DHT_KEY");
        if (ca == null && cert == null) {
            return null;
        }
        if ((cert == null) != (key == null)) {
            throw new CliFailure(Dht.EXIT_REFUSED, "--cert and --key go together");
        }
        try {
            return tls(ca, cert, key);
        } catch (IOException | GeneralSecurityException | IllegalArgumentException e) {
            throw new CliFailure(Dht.EXIT_REFUSED, "cannot read the TLS files: " + e.getMessage(), e);
        }
    }

    /** The CA certificate option, or its default, for commands that pass it on (restore). */
    Path caCertificate() {
        return caCertificate != null ? caCertificate : pathFromEnvironment("DHT_CACERT");
    }

    private Path pathFromEnvironment(String name) {
        String value = context.environment().get(name);
        return value == null || value.isBlank() ? null : Path.of(value);
    }

    /** A TLS context that trusts the certificates of {@code ca} (if any) and presents {@code cert} (if any). */
    static SSLContext tls(Path ca, Path cert, Path key) throws IOException, GeneralSecurityException {
        TrustManagerFactory trust = null;
        if (ca != null) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate certificate : certificates(ca)) {
                store.setCertificateEntry("ca-" + i++, certificate);
            }
            trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
        }
        KeyManagerFactory keys = null;
        if (cert != null) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            char[] password = new char[0];
            store.setKeyEntry("client", privateKey(key), password, certificates(cert).toArray(Certificate[]::new));
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys == null ? null : keys.getKeyManagers(), trust == null ? null : trust.getTrustManagers(), null);
        return context;
    }

    private static Collection<? extends Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509")
                    .generateCertificates(in);
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException(file + " holds no certificate");
            }
            return certificates;
        }
    }

    /** An unencrypted PKCS#8 PEM key ({@code BEGIN PRIVATE KEY}) of RSA, EC or EdDSA. */
    private static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        String pem = Files.readString(file, StandardCharsets.US_ASCII);
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
        int end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException(file + " holds no unencrypted PKCS#8 key (BEGIN PRIVATE KEY)");
        }
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        GeneralSecurityException last = null;
        for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw last;
    }
}
