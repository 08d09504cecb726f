/**
 * Admission control in the Netty pipeline, before WebFlux sees a request: the in-flight limit, event-loop lag and
 * queue-delay shedding (503 with Retry-After), request framing checks and the mark of a malformed body.
 */
package dev.dht.admission;
