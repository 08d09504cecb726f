package dev.dht.cluster;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the seeds for the cluster's view at start-up, before the node's own beans exist: so a node listed in
 * {@code dht.nodes} whose data dir holds no view (a new volume, a wiped disk) finds out whether the cluster already
 * runs, and joins it or takes its view, instead of starting a second cluster of its own. One
 * {@code GET /internal/cluster/view} per seed (with the cluster secret), each within {@link #TIMEOUT}.
 *
 * <p>Blocking (the JDK's HTTP client): start-up only, never on an event loop.
 */
public final class SeedViews {
    /** Longest wait for one seed: a seed that is not up yet must not hold a new cluster's start for long. */
    static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final Logger log = LoggerFactory.getLogger(SeedViews.class);
    private final String secret;
    private final String viewPath;
    private final String secretHeader;
    private final SSLContext tls;

    /**
     * @param secret       {@code dht.cluster-secret}
     * @param viewPath     the path of the view endpoint
     * @param secretHeader the header that carries the secret
     * @param tls          the peers' TLS (the SSL bundle's trust store, and its key for mutual TLS), or null
     *                     without TLS: seeds on https are reached with it, so a node on an empty disk of a TLS
     *                     cluster finds the running cluster as any other does
     */
    public SeedViews(String secret, String viewPath, String secretHeader, SSLContext tls) {
        this.secret = secret;
        this.viewPath = viewPath;
        this.secretHeader = secretHeader;
        this.tls = tls;
    }

    /**
     * The view of each of {@code seeds} (but {@code self}) that answers one, at any epoch (0: a seed of a cluster
     * not formed yet); a seed that does not answer in time is absent. Empty without a cluster secret.
     */
    public Map<URI, ClusterView> answers(List<URI> seeds, URI self) {
        Map<URI, ClusterView> answers = new LinkedHashMap<>();
        if (secret == null || secret.isBlank()) {
            return answers;
        }
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
        if (tls != null) {
            builder.sslContext(tls);
        }
        HttpClient client = builder.build();
        for (URI seed : seeds) {
            if (seed.equals(self)) {
                continue;
            }
            try {
                HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create(seed + viewPath))
                        .timeout(TIMEOUT).header(secretHeader, secret).GET().build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                if (answer.statusCode() == 200) {
                    answers.put(seed, ClusterViewFile.decode(answer.body()));
                }
            } catch (IOException | IllegalArgumentException e) {
                log.info("seed {} gave no view: {}", seed, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return answers;
            }
        }
        return answers;
    }
}
