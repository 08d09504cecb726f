package dev.dht.config;

import java.util.Locale;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Turns an {@link InvalidSettingException} anywhere in a start-up failure into Spring Boot's short
 * "APPLICATION FAILED TO START" report naming the setting, instead of a stack trace.
 * Registered in {@code META-INF/spring.factories}; ordered before Boot's generic bind-failure analyzer.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public final class InvalidSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidSettingException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidSettingException cause) {
        return new FailureAnalysis("Invalid setting " + cause.getMessage(),
                "Fix " + cause.setting() + " (command-line --" + cause.setting() + "=..., or the environment variable "
                        + cause.setting().toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_') + ").",
                cause);
    }
}
