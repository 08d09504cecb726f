package dev.dht.api;

import dev.dht.http.BadRequestException;
import dev.dht.http.QueryParameters;
import dev.dht.replication.ReplicationFactor;
import java.time.Duration;
import java.util.Optional;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Parses the query parameters of v0 requests. Every problem becomes a {@link BadRequestException} (400)
 * whose message says what was wrong. (A query whose percent-encoding is malformed, {@code %zz} or a lone
 * {@code %}, never gets here: WebFlux refuses its URI with 400.) Pure; never blocks.
 */
public final class RequestParameters {

    private RequestParameters() {
    }

    /**
     * A key parameter ({@code id}, {@code start}, {@code end}) that must be present and non-empty: see
     * {@link #optionalKey(ServerRequest, String)} for what a key may hold.
     *
     * @throws BadRequestException if it is missing, empty, not UTF-8 or holds a control character
     */
    public static String requiredKey(ServerRequest request, String name) {
        String value = QueryParameters.required(request, name);
        KeyText.check(request, name, value);
        return value;
    }

    /**
     * An optional key parameter, empty if absent. A key is the UTF-8 text its percent-encoded bytes spell, so
     * two distinct byte strings are never one key: bytes that are not UTF-8 ({@code %ff}, overlong forms,
     * encoded surrogates) are refused rather than read as U+FFFD, which would make {@code id=%ff},
     * {@code id=%fe} and {@code id=%EF%BF%BD} (a valid U+FFFD) the same key. Control characters (U+0000 to
     * U+001F and U+007F) are refused too: the range stream separates a key from its value by {@code \n}, so a
     * key holding one could not be read back from it, and NUL, CR and the like only break logs and clients.
     *
     * @throws BadRequestException if it is present but empty, not UTF-8 or holds a control character
     */
    public static Optional<String> optionalKey(ServerRequest request, String name) {
        Optional<String> value = QueryParameters.optional(request, name);
        value.ifPresent(key -> KeyText.check(request, name, key));
        return value;
    }

    /**
     * The replication factor of a request: {@code replicas=ack/from}, or {@code ack=A&from=F}; absent means
     * {@code defaultReplicas} ({@link ReplicationFactor#defaultFor}).
     *
     * @throws BadRequestException if malformed, {@code ack < 1}, {@code ack > from} or {@code from > n}
     */
    public static ReplicationFactor replicationFactor(ServerRequest request, ReplicationFactor defaultReplicas,
                                                      int clusterSize) {
        Optional<String> replicas = request.queryParam("replicas");
        Optional<String> ack = request.queryParam("ack");
        Optional<String> from = request.queryParam("from");
        if (replicas.isEmpty() && ack.isEmpty() && from.isEmpty()) {
            return defaultReplicas;
        }
        if (replicas.isPresent() && (ack.isPresent() || from.isPresent())) {
            throw new BadRequestException("give either replicas=ack/from or ack=A&from=F, not both");
        }
        String ackText;
        String fromText;
        if (replicas.isPresent()) {
            String[] parts = replicas.get().split("/", -1);
            if (parts.length != 2) {
                throw new BadRequestException("replicas must be ack/from, e.g. 2/3, was '" + replicas.get() + "'");
            }
            ackText = parts[0];
            fromText = parts[1];
        } else {
            if (ack.isEmpty() || from.isEmpty()) {
                throw new BadRequestException("ack and from must be given together");
            }
            ackText = ack.get();
            fromText = from.get();
        }
        try {
            return new ReplicationFactor(parseCount("ack", ackText), parseCount("from", fromText)).within(clusterSize);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }

    /** Longest TTL: 10 years of 365 days, in seconds. */
    public static final long MAX_TTL_SECONDS = 10L * 365 * 24 * 60 * 60;

    /**
     * The {@code ttl} of a PUT in whole seconds, empty if absent.
     *
     * @throws BadRequestException if it is not a whole number of seconds from 1 to {@link #MAX_TTL_SECONDS}
     */
    public static Optional<Duration> ttl(ServerRequest request) {
        Optional<String> ttl = request.queryParam("ttl");
        if (ttl.isEmpty()) {
            return Optional.empty();
        }
        String text = ttl.get();
        boolean digits = !text.isEmpty() && text.length() <= 10 && text.chars().allMatch(c -> c >= '0' && c <= '9');
        long seconds = digits ? Long.parseLong(text) : 0;
        if (seconds < 1 || seconds > MAX_TTL_SECONDS) {
            throw new BadRequestException("ttl must be whole seconds from 1 to " + MAX_TTL_SECONDS
                    + " (10 years), was '" + text + "'");
        }
        return Optional.of(Duration.ofSeconds(seconds));
    }

    /**
     * Refuses a {@code ttl} parameter on a request that takes none (GET, DELETE, ranges).
     *
     * @throws BadRequestException if {@code ttl} is present
     */
    public static void noTtl(ServerRequest request) {
        if (request.queryParam("ttl").isPresent()) {
            throw new BadRequestException("ttl is only supported on PUT /v0/entity");
        }
    }

    private static int parseCount(String name, String text) {
        if (text.isEmpty() || text.length() > 9 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new BadRequestException(name + " must be a positive whole number, was '" + text + "'");
        }
        return Integer.parseInt(text);
    }
}
