package dev.dht.config;

import reactor.netty.http.client.HttpClient;

/**
 * Adds to the replica client's Reactor Netty {@link HttpClient} (the shared client of every call to a peer, see
 * {@code PeerTransportConfiguration#replicaWebClient}) after its timeouts, keep-alive and resolver are set: TLS
 * ({@link TlsConfiguration}). Beans of this type are applied in order.
 */
@FunctionalInterface
interface ReplicaClientCustomizer {

    /** {@code client} with this customizer's settings added. */
    HttpClient customize(HttpClient client);
}
