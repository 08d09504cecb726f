package dev.dht.api;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The malformed and hostile requests {@link HostileRequestsTest} sends to a node over raw sockets, each with what a
 * node must answer. Every id a case could store starts with {@value #ID_PREFIX}, so the test can see whether any
 * of them was stored.
 */
final class HostileRequests {
    /** Prefix of every id a hostile request names. */
    static final String ID_PREFIX = "hostile-";
    /** Declared or sent body size over the default 8 MB value limit, in bytes. */
    private static final int OVER_LIMIT = 9 * 1024 * 1024;

    /** How a case's bytes are sent. */
    enum Delivery {
        /** All at once, then wait for the answer. */
        AT_ONCE,
        /** All at once, then the client's side of the connection is shut (a request cut off). */
        THEN_HALF_CLOSE,
        /** One byte every 100 ms for at most {@link HostileRequestsTest#TRICKLE_LIMIT}, then silence (slowloris). */
        TRICKLE,
        /** The head at once, then the body as {@link #TRICKLE} sends it. */
        TRICKLE_BODY
    }

    /** What a node must answer. */
    enum Expect {
        /** A 4xx, or the connection closed without an answer. */
        REFUSED,
        /** 403: an internal endpoint without the right cluster secret. */
        FORBIDDEN,
        /** 200: an actuator endpoint meant to be exposed. */
        SERVED,
        /** 400 or 404: an actuator endpoint that must not be exposed. */
        NOT_EXPOSED
    }

    /** One case: a name for the table, the group it belongs to, the bytes, how they are sent, the expectation. */
    record Case(String group, String name, byte[] bytes, Delivery delivery, Expect expect) {
    }

    private final List<Case> cases = new ArrayList<>();
    private String group;

    private HostileRequests() {
    }

    /** Every case, in the order of the table. */
    static List<Case> all() {
        HostileRequests all = new HostileRequests();
        all.percentEncodingAndKeys();
        all.sizes();
        all.framing();
        all.chunks();
        all.bodies();
        all.slowClients();
        all.methodsTargetsVersions();
        all.internalAndActuator();
        return all.cases;
    }

    private void percentEncodingAndKeys() {
        group = "bad percent-encoding, invalid keys";
        refused("id=%zz", put("%zz", "x"));
        refused("id=% (lone)", put("%", "x"));
        refused("id=a%f (short escape)", put("a%f", "x"));
        refused("id=%%41", put("%%41", "x"));
        refused("start=%g0 on /v0/entities", get("/v0/entities?start=%g0"));
        refused("id=%ff (not UTF-8)", put("%ff", "x"));
        refused("id=%C0%AF (overlong /)", put("%C0%AF", "x"));
        refused("id=%ED%A0%80 (encoded surrogate)", put("%ED%A0%80", "x"));
        refused("start=%fe on /v0/entities", get("/v0/entities?start=%fe"));
        refused("id=%00 (NUL)", put("a%00b", "x"));
        refused("id=%0A (LF)", put("a%0Ab", "x"));
        refused("id=%0D%0A (CRLF)", put("a%0D%0Ab", "x"));
        refused("raw NUL in the request line", ascii("PUT /v0/entity?id=" + ID_PREFIX + "a\0b HTTP/1.1\r\nHost: x\r\n"
                + "Content-Length: 1\r\n\r\nx"));
        refused("raw CR in the request target", ascii("PUT /v0/entity?id=" + ID_PREFIX + "a\rb HTTP/1.1\r\nHost: x\r\n"
                + "Content-Length: 1\r\n\r\nx"));
        refused("raw byte 0xE9 in the request target", latin1("PUT /v0/entity?id=" + ID_PREFIX + "caf\u00e9 HTTP/1.1\r\n"
                + "Host: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("empty id", ascii("PUT /v0/entity?id= HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("no id", ascii("PUT /v0/entity HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("replicas=0/1", ascii("PUT /v0/entity?id=" + ID_PREFIX + "r&replicas=0/1 HTTP/1.1\r\nHost: x\r\n"
                + "Content-Length: 1\r\n\r\nx"));
        refused("replicas=99999999999/1", ascii("PUT /v0/entity?id=" + ID_PREFIX + "r&replicas=99999999999/1 HTTP/1.1\r\n"
                + "Host: x\r\nContent-Length: 1\r\n\r\nx"));
    }

    private void sizes() {
        group = "huge ids and header floods";
        refused("PUT with a 100 KB id", put("k".repeat(100 * 1024), "x"));
        refused("GET with a 100 KB id", get("/v0/entity?id=" + ID_PREFIX + "k".repeat(100 * 1024)));
        refused("one 100 KB header", head("PUT", "x", "X-Big: " + "h".repeat(100 * 1024) + "\r\nContent-Length: 1", "x"));
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            many.append("X-Flood-").append(i).append(": v\r\n");
        }
        refused("5000 headers (60 KB)", head("PUT", "x", many + "Content-Length: 1", "x"));
        refused("a 10 KB header name", head("PUT", "x", "X-" + "n".repeat(10 * 1024) + ": v\r\nContent-Length: 1", "x"));
    }

    private void framing() {
        group = "request smuggling shapes";
        refused("Content-Length and Transfer-Encoding", head("PUT", "x",
                "Content-Length: 3\r\nTransfer-Encoding: chunked", "3\r\nabc\r\n0\r\n\r\n"));
        refused("Transfer-Encoding then Content-Length", head("PUT", "x",
                "Transfer-Encoding: chunked\r\nContent-Length: 16", "3\r\nabc\r\n0\r\n\r\n"));
        refused("two different Content-Lengths", head("PUT", "x", "Content-Length: 1\r\nContent-Length: 2", "xy"));
        refused("Content-Length: 1, 2", head("PUT", "x", "Content-Length: 1, 2", "xy"));
        refused("Content-Length: -1", head("PUT", "x", "Content-Length: -1", "x"));
        refused("Content-Length: +1", head("PUT", "x", "Content-Length: +1", "x"));
        refused("Content-Length: 0x10", head("PUT", "x", "Content-Length: 0x10", "x"));
        refused("Content-Length: 99999999999999999999", head("PUT", "x", "Content-Length: 99999999999999999999", "x"));
        refused("space before the colon", head("PUT", "x", "Content-Length : 1", "x"));
        refused("Transfer-Encoding: xchunked", head("PUT", "x", "Transfer-Encoding: xchunked", "3\r\nabc\r\n0\r\n\r\n"));
        refused("Transfer-Encoding: chunked, identity", head("PUT", "x", "Transfer-Encoding: chunked, identity",
                "3\r\nabc\r\n0\r\n\r\n"));
        refused("Transfer-Encoding: gzip, chunked", head("PUT", "x", "Transfer-Encoding: gzip, chunked",
                "3\r\nabc\r\n0\r\n\r\n"));
        refused("two Transfer-Encoding headers", head("PUT", "x", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity",
                "3\r\nabc\r\n0\r\n\r\n"));
        refused("obs-fold in Transfer-Encoding", head("PUT", "x", "Transfer-Encoding:\r\n chunked", "3\r\nabc\r\n0\r\n\r\n"));
        refused("LF-only line ends", ascii("PUT /v0/entity?id=" + ID_PREFIX + "lf HTTP/1.1\nHost: x\n"
                + "Transfer-Encoding: chunked\nContent-Length: 3\n\n3\nabc\n0\n\n"));
        refused("HTTP/1.0 with Transfer-Encoding", ascii("PUT /v0/entity?id=" + ID_PREFIX + "te10 HTTP/1.0\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
    }

    private void chunks() {
        group = "bad chunk sizes";
        refused("chunk size zz", head("PUT", "x", "Transfer-Encoding: chunked", "zz\r\nabc\r\n0\r\n\r\n"));
        refused("3 abc, then zz", head("PUT", "x", "Transfer-Encoding: chunked", "3\r\nabc\r\nzz\r\n"));
        refused("chunk size -1", head("PUT", "x", "Transfer-Encoding: chunked", "-1\r\nabc\r\n0\r\n\r\n"));
        refused("chunk size 2^64", head("PUT", "x", "Transfer-Encoding: chunked", "10000000000000000\r\nabc\r\n0\r\n\r\n"));
        refused("chunk of 3 carrying 5 bytes", head("PUT", "x", "Transfer-Encoding: chunked", "3\r\nabcde\r\n0\r\n\r\n"));
        refused("chunk size 0x3", head("PUT", "x", "Transfer-Encoding: chunked", "0x3\r\nabc\r\n0\r\n\r\n"));
        refused("DELETE with a bad chunk", head("DELETE", "x", "Transfer-Encoding: chunked", "1\r\nx\r\nzz\r\n"));
        refused("internal PUT with a bad chunk", internal("PUT", InternalProtocol.RECORD_PATH + "?id=" + ID_PREFIX + "i",
                InProcessCluster.SECRET, "Transfer-Encoding: chunked", "zz\r\n"));
    }

    private void bodies() {
        group = "oversize and cut-off bodies";
        cases.add(new Case(group, "Content-Length over the limit, no body sent",
                head("PUT", "x", "Content-Length: " + OVER_LIMIT, ""), Delivery.AT_ONCE, Expect.REFUSED));
        refused("Content-Length over the limit, body sent", head("PUT", "x", "Content-Length: " + OVER_LIMIT,
                "v".repeat(OVER_LIMIT)));
        refused("chunked body over the limit", head("PUT", "x", "Transfer-Encoding: chunked",
                Integer.toHexString(OVER_LIMIT) + "\r\n" + "v".repeat(OVER_LIMIT) + "\r\n0\r\n\r\n"));
        refused("100-continue over the limit", head("PUT", "x", "Expect: 100-continue\r\nContent-Length: " + OVER_LIMIT, ""));
        refused("internal batch over 1 MB", internal("POST", InternalProtocol.RECORDS_PATH, InProcessCluster.SECRET,
                "Content-Length: " + (2 << 20), "b".repeat(2 << 20)));
        refused("internal batch read over 1 MB", internal("POST", InternalProtocol.READS_PATH, InProcessCluster.SECRET,
                "Content-Length: " + (2 << 20), "b".repeat(2 << 20)));
        refused("internal batch read, key length past the body", internal("POST", InternalProtocol.READS_PATH,
                InProcessCluster.SECRET, "Content-Length: 8", "\u0000\u0000\u0010\u0000abcd"));
        cases.add(new Case(group, "Content-Length: 10, 3 bytes, then FIN",
                head("PUT", "x", "Content-Length: 10", "abc"), Delivery.THEN_HALF_CLOSE, Expect.REFUSED));
        cases.add(new Case(group, "chunked, cut off mid-chunk, then FIN",
                head("PUT", "x", "Transfer-Encoding: chunked", "5\r\nab"), Delivery.THEN_HALF_CLOSE, Expect.REFUSED));
    }

    private void slowClients() {
        group = "slow clients (slowloris)";
        cases.add(new Case(group, "request line cut off, then silence",
                ascii("PUT /v0/entity?id=" + ID_PREFIX + "slow"), Delivery.AT_ONCE, Expect.REFUSED));
        cases.add(new Case(group, "headers trickled one byte per 100 ms",
                ascii("PUT /v0/entity?id=" + ID_PREFIX + "slow-head HTTP/1.1\r\nHost: x\r\nX-Slow: "
                        + "s".repeat(200) + "\r\n"), Delivery.TRICKLE, Expect.REFUSED));
        cases.add(new Case(group, "body trickled one byte per 100 ms",
                head("PUT", "slow-body", "Content-Length: 1000", "b".repeat(100)), Delivery.TRICKLE_BODY, Expect.REFUSED));
    }

    private void methodsTargetsVersions() {
        group = "methods, request targets, versions";
        for (String method : new String[] {"PATCH", "POST", "TRACE", "FOO", "get"}) {
            refused(method + " /v0/entity", ascii(method + " /v0/entity?id=" + ID_PREFIX + "m HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Length: 1\r\n\r\nx"));
        }
        refused("CONNECT authority-form", ascii("CONNECT localhost:80 HTTP/1.1\r\nHost: localhost:80\r\n\r\n"));
        refused("OPTIONS *", ascii("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"));
        refused("absolute-form with an invalid id", ascii("PUT http://evil.example/v0/entity?id=%ff HTTP/1.1\r\n"
                + "Host: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("absolute-form to /internal without secret", ascii("PUT http://x/internal/record?id=" + ID_PREFIX
                + "abs HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("dot segments to /internal", ascii("PUT /v0/../internal/record?id=" + ID_PREFIX + "dots HTTP/1.1\r\n"
                + "Host: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("encoded dot segments", ascii("PUT /v0/%2e%2e/internal/record?id=" + ID_PREFIX + "dots HTTP/1.1\r\n"
                + "Host: x\r\nContent-Length: 1\r\n\r\nx"));
        refused("HTTP/2 prior-knowledge preface", ascii("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        refused("HTTP/0.9 request line", ascii("GET /v0/entity?id=" + ID_PREFIX + "09\r\n\r\n"));
        refused("HTTP/2.0 PUT", ascii("PUT /v0/entity?id=" + ID_PREFIX + "v2 HTTP/2.0\r\nHost: x\r\n"
                + "Content-Length: 1\r\n\r\nx"));
        refused("HTTP/3.0 PUT", ascii("PUT /v0/entity?id=" + ID_PREFIX + "v3 HTTP/3.0\r\nHost: x\r\n"
                + "Content-Length: 1\r\n\r\nx"));
        refused("garbage bytes", new byte[] {0x16, 0x03, 0x01, 0x00, (byte) 0xa5, 0x01, 0x00, 0x00, (byte) 0xa1, 0x03});
    }

    private void internalAndActuator() {
        group = "internal endpoints and actuator";
        forbidden("GET /internal/record, no secret", InternalProtocol.RECORD_PATH + "?id=" + ID_PREFIX + "i", "GET", null);
        forbidden("PUT /internal/record, wrong secret", InternalProtocol.RECORD_PATH + "?id=" + ID_PREFIX + "i", "PUT", "wrong");
        forbidden("POST /internal/records, no secret", InternalProtocol.RECORDS_PATH, "POST", null);
        forbidden("POST /internal/records, empty secret", InternalProtocol.RECORDS_PATH, "POST", "");
        forbidden("POST /internal/records/read, no secret", InternalProtocol.READS_PATH, "POST", null);
        forbidden("POST /internal/records/read, wrong secret", InternalProtocol.READS_PATH, "POST", "wrong");
        forbidden("GET /internal/range, wrong secret", InternalProtocol.RANGE_PATH + "?start=a", "GET", "x"
                + InProcessCluster.SECRET);
        forbidden("PUT /internal/record, secret's prefix", InternalProtocol.RECORD_PATH + "?id=" + ID_PREFIX + "i", "PUT",
                InProcessCluster.SECRET.substring(0, 5));
        for (String exposed : new String[] {"health", "health/liveness", "health/readiness", "info", "prometheus"}) {
            cases.add(new Case(group, "GET /actuator/" + exposed, ascii("GET /actuator/" + exposed
                    + " HTTP/1.1\r\nHost: x\r\n\r\n"), Delivery.AT_ONCE, Expect.SERVED));
        }
        for (String hidden : new String[] {"env", "beans", "configprops", "heapdump", "threaddump", "loggers", "mappings",
            "metrics", "caches", "conditions", "scheduledtasks", "startup"}) {
            cases.add(new Case(group, "GET /actuator/" + hidden, ascii("GET /actuator/" + hidden
                    + " HTTP/1.1\r\nHost: x\r\n\r\n"), Delivery.AT_ONCE, Expect.NOT_EXPOSED));
        }
        cases.add(new Case(group, "POST /actuator/shutdown", ascii("POST /actuator/shutdown HTTP/1.1\r\nHost: x\r\n"
                + "Content-Length: 0\r\n\r\n"), Delivery.AT_ONCE, Expect.NOT_EXPOSED));
    }

    private void refused(String name, byte[] bytes) {
        cases.add(new Case(group, name, bytes, Delivery.AT_ONCE, Expect.REFUSED));
    }

    private void forbidden(String name, String target, String method, String secret) {
        String body = method.equals("GET") ? "" : "x";
        cases.add(new Case(group, name, ascii(method + " " + target + " HTTP/1.1\r\nHost: x\r\n"
                + (secret == null ? "" : InternalProtocol.SECRET_HEADER + ": " + secret + "\r\n")
                + "Content-Length: " + body.length() + "\r\n\r\n" + body), Delivery.AT_ONCE, Expect.FORBIDDEN));
    }

    /** A PUT of {@code value} to the id {@code ID_PREFIX + rawId}, the id written into the target as it is. */
    private static byte[] put(String rawId, String value) {
        return ascii("PUT /v0/entity?id=" + ID_PREFIX + rawId + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + value.length()
                + "\r\n\r\n" + value);
    }

    private static byte[] get(String target) {
        return ascii("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    }

    /** {@code method} of the id {@code ID_PREFIX + id} with extra header lines (no final CRLF) and a body. */
    private static byte[] head(String method, String id, String headers, String body) {
        return ascii(method + " /v0/entity?id=" + ID_PREFIX + id + " HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n\r\n" + body);
    }

    private static byte[] internal(String method, String target, String secret, String headers, String body) {
        return ascii(method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + InternalProtocol.SECRET_HEADER + ": " + secret
                + "\r\n" + headers + "\r\n\r\n" + body);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] latin1(String text) {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }
}
