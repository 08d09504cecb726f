/**
 * What every HTTP handler shares, the v0 API's and the {@code /internal/*} endpoints': a request body read within
 * its size limit ({@link dev.dht.http.RequestBodyReader}), query parameters, the failures of bad input (400, 413),
 * whether a TLS client certificate was verified. Low in the package graph, so that each feature can serve its own
 * endpoints: it knows admission control's marks on a body and nothing of a feature.
 */
package dev.dht.http;
