package dev.dht.config;

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

    /** The property name, e.g. {@code dht.self}. */
    public String setting() {
        return setting;
    }
}
