package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** The start-up report of a wrong setting names the setting and its environment variable. */
class InvalidSettingFailureAnalyzerTest {
    private final Locale defaultLocale = Locale.getDefault();

    @AfterEach
    void restoreLocale() {
        Locale.setDefault(defaultLocale);
    }

    @Test
    void theEnvironmentVariableIsNamedTheSameInEveryLocale() {
        Locale.setDefault(Locale.forLanguageTag("tr-TR"));   // "i".toUpperCase() is "İ" in Turkish
        FailureAnalysis analysis = new InvalidSettingFailureAnalyzer()
                .analyze(new IllegalStateException(new InvalidSettingException("dht.data-dir", "is not writable")));
        assertThat(analysis.getDescription()).isEqualTo("Invalid setting dht.data-dir: is not writable");
        assertThat(analysis.getAction()).contains("--dht.data-dir=...", "environment variable DHT_DATA_DIR)");
    }
}
