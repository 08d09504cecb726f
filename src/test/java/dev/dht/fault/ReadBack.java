package dev.dht.fault;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.DhtClient;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * How the fault tests read back what a cluster of node processes holds once a fault is over. An I/O error is
 * returned as a value, never thrown: a node may still be unreachable, and the test counts it as missing.
 */
final class ReadBack {
    private ReadBack() {
    }

    /** The value a read of {@code id} at {@code replicas} through {@code node} returns, else "status N" or the error. */
    static String value(URI node, String id, String replicas) {
        try {
            HttpResponse<byte[]> response = new DhtClient(node).get(id, replicas);
            return response.statusCode() == 200 ? new String(response.body(), StandardCharsets.UTF_8)
                    : "status " + response.statusCode();
        } catch (UncheckedIOException e) {
            return e.getCause().toString();
        }
    }

    /** Status of {@code node}'s own record of {@code id}: 200 if it has one, 404 if not, -1 on an I/O error. */
    static int ownRecordStatus(URI node, String secret, String id) {
        try {
            return new DhtClient(node).send("GET", InternalProtocol.RECORD_PATH + "?id=" + id, new byte[0],
                    InternalProtocol.SECRET_HEADER, secret).statusCode();
        } catch (UncheckedIOException e) {
            return -1;
        }
    }
}
