/**
 * The public v0 API: the handlers of {@code /v0/entity}, {@code /v0/entities} and {@code /v0/status}, their
 * routes and the parsing of their parameters (keys, {@code replicas=ack/from}, {@code ttl}).
 */
package dev.dht.api;
