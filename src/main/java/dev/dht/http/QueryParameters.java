package dev.dht.http;

import java.util.Optional;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Reads query parameters that must be present, or may be absent but not empty, the same way for the v0 API and the
 * {@code /internal/*} endpoints: a problem becomes a {@link BadRequestException} (400) that names the parameter.
 * Parameters with a meaning of their own (keys, replicas, ttl) are parsed by their handlers on top of these. Pure;
 * never blocks.
 */
public final class QueryParameters {

    private QueryParameters() {
    }

    /**
     * The value of a parameter that must be present and non-empty (percent-decoded as UTF-8).
     *
     * @throws BadRequestException if it is missing or empty
     */
    public static String required(ServerRequest request, String name) {
        String value = request.queryParam(name).orElse("");
        if (value.isEmpty()) {
            throw new BadRequestException("missing or empty parameter '" + name + "'");
        }
        return value;
    }

    /**
     * The value of an optional parameter, empty if absent.
     *
     * @throws BadRequestException if it is present but empty
     */
    public static Optional<String> optional(ServerRequest request, String name) {
        Optional<String> value = request.queryParam(name);
        if (value.isPresent() && value.get().isEmpty()) {
            throw new BadRequestException("empty parameter '" + name + "'");
        }
        return value;
    }
}
