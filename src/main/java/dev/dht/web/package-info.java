/**
 * The HTTP edge shared by the v0 API and the peer endpoints: the one place where failures become HTTP statuses
 * ({@link dev.dht.web.ErrorResponseHandler}), the guards of the actuator and the count of failed TLS handshakes. What
 * the handlers themselves share (reading a body, query parameters) is in {@code dev.dht.http}.
 */
package dev.dht.web;
