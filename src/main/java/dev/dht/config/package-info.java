/**
 * Settings ({@link dev.dht.config.DhtProperties}, validated at start) and the wiring of the beans, one
 * configuration class per feature.
 */
package dev.dht.config;
