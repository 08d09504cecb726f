package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * docs/reference.md's settings table says what the code says: the configuration processor writes every
 * {@code dht.*} setting of the {@code *Properties} classes, with its {@code @DefaultValue} and its Javadoc, into
 * {@code META-INF/spring-configuration-metadata.json}, and the table lists each of them once, none other, with that
 * default (or application.yml's, where the code declares none) and that description ({@code {@code x}} written as
 * {@code `x`}). A setting with no default in either is given a default in words, not as a value. Rows of other
 * settings (Spring Boot's {@code server.*}, ...) are not checked. On a difference it prints the rows to write.
 */
class SettingsReferenceTest {

    private static final Path REFERENCE = Path.of("docs/reference.md");
    private static final String METADATA = "META-INF/spring-configuration-metadata.json";
    /** A table row: | `name` | default | meaning | */
    private static final Pattern ROW = Pattern.compile("^\\| `(dht\\.[^`]+)` \\| (.*?) \\| (.*) \\|$");

    @Test
    void everyDhtSettingIsInTheReferenceTableOnceWithItsDefaultAndDescription() throws IOException {
        Map<String, Row> expected = settingsOfTheMetadata();
        assertThat(expected).as("dht.* settings in %s (is the configuration processor on?)", METADATA)
                .containsKeys("dht.self", "dht.replica-timeout", "dht.max-value-size", "dht.tls.bundle",
                        "dht.rebuild.accept-missing", "dht.backup.s3.sse");

        List<String> differences = new ArrayList<>();
        Map<String, Row> table = new LinkedHashMap<>();
        for (String line : Files.readAllLines(REFERENCE)) {
            Matcher row = ROW.matcher(line);
            if (row.matches() && table.put(row.group(1), new Row(row.group(2), row.group(3))) != null) {
                differences.add(row.group(1) + ": listed twice");
            }
        }
        table.forEach((name, row) -> {
            Row wanted = expected.get(name);
            if (wanted == null) {
                differences.add(name + ": in the table, but no such setting");
            } else if (!wanted.matches(row)) {
                differences.add(name + ": the table has\n  " + row.line(name) + "\n  the code says\n  " + wanted.line(name));
            }
        });
        expected.forEach((name, row) -> {
            if (!table.containsKey(name)) {
                differences.add(name + ": missing from the table; its row:\n  " + row.line(name));
            }
        });
        assertThat(differences).as("%s against the settings' metadata", REFERENCE).isEmpty();
    }

    /** The {@code dht.*} settings of this project's metadata, with the rows the table must hold for them. */
    private static Map<String, Row> settingsOfTheMetadata() throws IOException {
        PropertySource<?> applicationYml = new YamlPropertySourceLoader()
                .load("application.yml", new ClassPathResource("application.yml")).get(0);
        Map<String, Row> settings = new LinkedHashMap<>();
        for (URL url : Collections.list(SettingsReferenceTest.class.getClassLoader().getResources(METADATA))) {
            JsonNode metadata;
            try (InputStream in = url.openStream()) {
                metadata = JsonMapper.builder().build().readTree(in);
            }
            for (JsonNode property : metadata.path("properties")) {
                String name = property.path("name").asString();
                if (!name.startsWith("dht.") || !property.path("sourceType").asString().startsWith("dev.dht.config.")) {
                    continue;
                }
                JsonNode defaultValue = property.get("defaultValue");
                Object yml = applicationYml.getProperty(name);
                String shownDefault = defaultValue != null ? shown(defaultValue.asString())
                        : yml != null ? shown(yml.toString()) : null;
                settings.put(name, new Row(shownDefault, description(property.path("description").asString())));
            }
        }
        return settings;
    }

    /** A default as the table shows it: a value as code, an empty one as the word. */
    private static String shown(String value) {
        return value.isEmpty() ? "empty" : "`" + value + "`";
    }

    /** The Javadoc the processor copied, as the table's Markdown: code spans, one line, no cell separator. */
    private static String description(String javadoc) {
        return javadoc.replaceAll("\\{@code ([^}]*)}", "`$1`").replaceAll("\\s+", " ").strip().replace("|", "\\|");
    }

    /**
     * One setting's row: its default as shown (null: none declared, the table says it in words) and its meaning.
     */
    private record Row(String defaultValue, String meaning) {
        boolean matches(Row tableRow) {
            boolean defaultMatches = defaultValue == null
                    ? !tableRow.defaultValue.startsWith("`") && !tableRow.defaultValue.isBlank()
                    : defaultValue.equals(tableRow.defaultValue);
            return defaultMatches && meaning.equals(tableRow.meaning);
        }

        String line(String name) {
            return "| `" + name + "` | " + (defaultValue == null ? "(in words)" : defaultValue) + " | " + meaning + " |";
        }
    }
}
