/**
 * Settings ({@link dev.dht.config.DhtProperties} and, with the same prefix, {@link dev.dht.config.AdmissionProperties}
 * and {@link dev.dht.config.ReplicaClientProperties}; {@link dev.dht.config.TlsProperties}; validated at start) and
 * the wiring of the beans, one configuration class per feature.
 */
package dev.dht.config;
