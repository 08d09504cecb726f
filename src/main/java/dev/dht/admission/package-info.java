/**
 * Admission control in the Netty pipeline, before WebFlux sees a request: the in-flight limit, the bound on request
 * body bytes in flight, event-loop lag and queue-delay shedding (503 with Retry-After), request framing checks and
 * the marks of a malformed or refused body.
 */
package dev.dht.admission;
