package dev.dht.config;

import java.time.Duration;
import org.springframework.util.unit.DataSize;

/**
 * A {@code dht.*} setting that cannot work (self not among the nodes, a duplicate node, a malformed URL, an
 * unwritable data dir, ...). Thrown while binding {@link DhtProperties}, {@link AdmissionProperties},
 * {@link ReplicaClientProperties} or {@link TlsProperties}; start-up then stops with the one-line message, which
 * starts with the setting's name ({@link InvalidSettingFailureAnalyzer}).
 */
public final class InvalidSettingException extends IllegalArgumentException {
    private final String setting;

    public InvalidSettingException(String setting, String problem) {
        super(setting + ": " + problem);
        this.setting = setting;
    }

    /**
     * Checks a whole-number setting against its least value.
     *
     * @throws InvalidSettingException "{@code SETTING: must be at least MIN, was VALUE}" if {@code value < min}
     */
    public static void requireAtLeast(String setting, long value, long min) {
        if (value < min) {
            throw new InvalidSettingException(setting, "must be at least " + min + ", was " + value);
        }
    }

    /**
     * Checks a duration setting that may be 0.
     *
     * @throws InvalidSettingException "{@code SETTING: must not be negative, was VALUE}" if {@code value} is
     */
    public static void requireNotNegative(String setting, Duration value) {
        if (value.isNegative()) {
            throw new InvalidSettingException(setting, "must not be negative, was " + value);
        }
    }

    /**
     * Checks a size setting that may be 0.
     *
     * @throws InvalidSettingException "{@code SETTING: must not be negative, was VALUE}" if {@code value} is
     */
    public static void requireNotNegative(String setting, DataSize value) {
        if (value.isNegative()) {
            throw new InvalidSettingException(setting, "must not be negative, was " + value);
        }
    }

    /** The property name, e.g. {@code dht.self}. */
    public String setting() {
        return setting;
    }
}
