package dev.dht.api;

import dev.dht.http.BadRequestException;
import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.springframework.web.reactive.function.server.ServerRequest;

/**
 * Checks the text of a key parameter ({@code id}, {@code start}, {@code end}) as WebFlux decoded it: no control
 * characters, and exactly the UTF-8 its percent-encoded bytes spell.
 *
 * <p>WebFlux decodes a query with {@link URLDecoder}, which turns bytes that are not UTF-8 into U+FFFD, so
 * distinct byte strings would become one key. Checking every key's raw bytes would cost every request a second
 * decoding; instead the raw value is decoded again, strictly, only when the decoded one holds a character that
 * such a replacement (U+FFFD) or a raw byte outside ASCII in the request line (read as U+0080 to U+00FF) can
 * produce. Pure; never blocks.
 */
final class KeyText {

    private KeyText() {
    }

    /**
     * @throws BadRequestException (400) if {@code value}, the decoded value of parameter {@code name}, holds a
     *                             control character (U+0000 to U+001F, U+007F), or its raw form in the query is not
     *                             percent-encoded ASCII that decodes to valid UTF-8
     */
    static void check(ServerRequest request, String name, String value) {
        boolean suspect = false;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                throw new BadRequestException(String.format(
                        "'%s' holds the control character U+%04X; keys may not hold U+0000-U+001F or U+007F", name, (int) c));
            }
            suspect |= c == '\uFFFD' || (c >= 0x80 && c <= 0xFF);
        }
        if (suspect && !isPercentEncodedUtf8(rawValue(request.uri().getRawQuery(), name))) {
            throw new BadRequestException("'" + name + "' is not UTF-8: its percent-encoded bytes must be valid UTF-8"
                    + " and every other byte ASCII");
        }
    }

    /**
     * The raw (still percent-encoded) first value of parameter {@code name} in {@code rawQuery}, split as WebFlux
     * splits it (pairs at '&', a name up to the first '='), or null if there is none.
     */
    static String rawValue(String rawQuery, String name) {
        if (rawQuery == null) {
            return null;
        }
        for (String pair : rawQuery.split("&")) {
            int equals = pair.indexOf('=');
            String rawName = equals < 0 ? pair : pair.substring(0, equals);
            if (!rawName.isEmpty() && name.equals(decodeOrNull(rawName))) {
                return equals < 0 ? "" : pair.substring(equals + 1);
            }
        }
        return null;
    }

    /** Whether {@code raw} is ASCII whose %XX escapes (and '+' for a space) spell valid UTF-8; false for null. */
    static boolean isPercentEncodedUtf8(String raw) {
        if (raw == null) {
            return false;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                int high = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
                int low = high < 0 ? -1 : Character.digit(raw.charAt(i + 2), 16);
                if (low < 0) {
                    return false;
                }
                bytes.write(high << 4 | low);
                i += 2;
            } else if (c >= 0x80) {
                return false;
            } else {
                bytes.write(c == '+' ? ' ' : c);
            }
        }
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static String decodeOrNull(String raw) {
        try {
            return URLDecoder.decode(raw, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
