package dev.dht;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for trying TLS and for tests: a self-signed CA on an EC P-256 key, and node
 * certificates it signs for a list of DNS names and IP addresses, good as server and as client certificates
 * (mutual TLS). Writes PEM files that a Spring Boot PEM SSL bundle reads ({@code spring.ssl.bundle.pem.*}). Lives
 * only in memory until written; the key of the CA is never written. Not for production: real clusters get their
 * certificates from their own CA (k8s/make-certs.sh, cert-manager).
 *
 * <p>Generating keys takes milliseconds and blocks; call it at start-up, never on an event loop.
 */
public final class LocalCertificateAuthority {
    private static final String SIGNATURE = "SHA256withECDSA";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KeyPair keys;
    private final X509Certificate certificate;

    private LocalCertificateAuthority(KeyPair keys, X509Certificate certificate) {
        this.keys = keys;
        this.certificate = certificate;
    }

    /** A node's certificate and its private key. */
    public record Issued(X509Certificate certificate, PrivateKey privateKey) {

        /** Writes the certificate and the (unencrypted PKCS#8) key as PEM files, the key readable by its owner only. */
        public void writeTo(Path certificateFile, Path privateKeyFile) {
            writePem(certificateFile, "CERTIFICATE", encoded(certificate));
            writePem(privateKeyFile, "PRIVATE KEY", privateKey.getEncoded());
        }
    }

    /** A new CA named {@code CN=commonName}, valid from an hour ago for {@code validity}. */
    public static LocalCertificateAuthority create(String commonName, Duration validity) {
        KeyPair keys = newKeyPair();
        X500Name name = new X500Name("CN=" + commonName);
        Instant now = Instant.now();
        try {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serialNumber(),
                    Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(validity)), name, keys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            extensions.createSubjectKeyIdentifier(keys.getPublic()));
            return new LocalCertificateAuthority(keys, sign(builder, keys.getPrivate()));
        } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot create a CA certificate", e);
        }
    }

    /** The CA's own certificate: what peers trust. */
    public X509Certificate certificate() {
        return certificate;
    }

    /** Writes the CA certificate as a PEM file (the trust store of a PEM bundle). */
    public void writeCertificate(Path file) {
        writePem(file, "CERTIFICATE", encoded(certificate));
    }

    /**
     * A node certificate for {@code names} (DNS names, or IP addresses where a name parses as one), the first
     * also its common name, valid from {@code notBefore} to {@code notAfter}; server and client authentication.
     */
    public Issued issue(List<String> names, Instant notBefore, Instant notAfter) {
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a node certificate needs at least one name");
        }
        KeyPair nodeKeys = newKeyPair();
        List<GeneralName> alternativeNames = new ArrayList<>();
        for (String name : names) {
            alternativeNames.add(isIpAddress(name)
                    ? new GeneralName(GeneralName.iPAddress, name)
                    : new GeneralName(GeneralName.dNSName, name));
        }
        try {
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serialNumber(),
                    Date.from(notBefore), Date.from(notAfter), new X500Name("CN=" + names.get(0)), nodeKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
                            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
                    .addExtension(Extension.subjectAlternativeName, false,
                            new GeneralNames(alternativeNames.toArray(GeneralName[]::new)))
                    .addExtension(Extension.authorityKeyIdentifier, false,
                            extensions.createAuthorityKeyIdentifier(certificate))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            extensions.createSubjectKeyIdentifier(nodeKeys.getPublic()));
            return new Issued(sign(builder, keys.getPrivate()), nodeKeys.getPrivate());
        } catch (IOException | GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot issue a certificate for " + names, e);
        }
    }

    /** {@link #issue(List, Instant, Instant)} valid from an hour ago for {@code validity}. */
    public Issued issue(List<String> names, Duration validity) {
        Instant now = Instant.now();
        return issue(names, now.minus(Duration.ofHours(1)), now.plus(validity));
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter().getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE)
                .build(issuerKey)));
    }

    private static KeyPair newKeyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no EC P-256 key generator in this JDK", e);
        }
    }

    private static BigInteger serialNumber() {
        return new BigInteger(64, RANDOM).add(BigInteger.ONE);
    }

    private static boolean isIpAddress(String name) {
        return name.matches("[0-9.]+") || name.contains(":");
    }

    private static byte[] encoded(X509Certificate certificate) {
        try {
            return certificate.getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@code der} as one PEM block; a private key's file is readable by its owner only (a temp file's mode), a certificate's by all. */
    private static void writePem(Path file, String type, byte[] der) {
        String pem = "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
        try {
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            // written next to the target and moved over it, so a watcher never reads half a file
            Path temp = Files.createTempFile(parent, "." + file.getFileName(), ".tmp");
            Files.writeString(temp, pem, StandardCharsets.US_ASCII);
            if (!type.endsWith("PRIVATE KEY") && Files.getFileStore(temp).supportsFileAttributeView("posix")) {
                Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-r--r--"));
            }
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
