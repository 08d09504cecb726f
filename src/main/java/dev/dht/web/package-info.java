/**
 * The HTTP edge shared by the v0 API and the peer endpoints: reading a request body within its size limit and the
 * one place where failures become HTTP statuses ({@link dev.dht.web.ErrorResponseHandler}).
 */
package dev.dht.web;
