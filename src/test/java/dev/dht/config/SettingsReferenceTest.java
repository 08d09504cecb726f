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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * docs/reference.md's settings tables say what the code says. The configuration processor writes every
 * {@code dht.*} setting of the {@code *Properties} classes, with its {@code @DefaultValue} and its Javadoc, into
 * {@code META-INF/spring-configuration-metadata.json}; the table lists each of them once, none other, with that
 * default (or application.yml's, where the code declares none) and that description ({@code {@code x}} written as
 * {@code `x`}). A setting with no default in either is given one in words, not as a value. The rows of Spring Boot's
 * own settings name settings Spring Boot's metadata has, with application.yml's default or else Spring Boot's; their
 * meanings are this project's own and not checked. On a difference it prints the rows to write.
 */
class SettingsReferenceTest {

    private static final Path REFERENCE = Path.of("docs/reference.md");
    private static final String METADATA = "META-INF/spring-configuration-metadata.json";
    /** A row of a table of the section "## Settings": | `name` | default | meaning | */
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z][^`]*)` \\| (.*?) \\| (.*) \\|$");

    /** Every setting of every metadata file on the class path (this project's and Spring Boot's), by name. */
    private static Map<String, JsonNode> metadata;
    private static PropertySource<?> applicationYml;
    /** The rows of the settings tables, by setting, and the settings listed more than once. */
    private static Map<String, Row> table;
    private static List<String> listedTwice;

    @BeforeAll
    static void read() throws IOException {
        applicationYml = new YamlPropertySourceLoader()
                .load("application.yml", new ClassPathResource("application.yml")).get(0);
        metadata = new LinkedHashMap<>();
        for (URL url : Collections.list(SettingsReferenceTest.class.getClassLoader().getResources(METADATA))) {
            try (InputStream in = url.openStream()) {
                JsonMapper.builder().build().readTree(in).path("properties")
                        .forEach(property -> metadata.putIfAbsent(property.path("name").asString(), property));
            }
        }
        table = new LinkedHashMap<>();
        listedTwice = new ArrayList<>();
        boolean settings = false;
        for (String line : Files.readAllLines(REFERENCE)) {
            if (line.startsWith("## ")) {
                settings = line.equals("## Settings");
            }
            Matcher row = ROW.matcher(line);
            if (settings && row.matches() && table.put(row.group(1), new Row(row.group(2), row.group(3))) != null) {
                listedTwice.add(row.group(1));
            }
        }
    }

    @Test
    void everyDhtSettingIsInTheReferenceTableOnceWithItsDefaultAndDescription() {
        Map<String, Row> expected = new LinkedHashMap<>();
        metadata.forEach((name, property) -> {
            if (name.startsWith("dht.") && property.path("sourceType").asString().startsWith("dev.dht.config.")) {
                expected.put(name, new Row(shownDefault(name, property), description(property)));
            }
        });
        assertThat(expected).as("dht.* settings in %s (is the configuration processor on?)", METADATA)
                .containsKeys("dht.self", "dht.replica-timeout", "dht.max-value-size", "dht.tls.bundle",
                        "dht.rebuild.accept-missing", "dht.backup.s3.sse");

        List<String> differences = new ArrayList<>();
        listedTwice.stream().filter(name -> name.startsWith("dht.")).forEach(name -> differences.add(name + ": listed twice"));
        table.forEach((name, row) -> {
            Row wanted = expected.get(name);
            if (!name.startsWith("dht.")) {
                return;
            }
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

    @Test
    void springBootSettingsInTheTableExistWithTheirDefault() {
        List<String> differences = new ArrayList<>();
        listedTwice.stream().filter(name -> !name.startsWith("dht.")).forEach(name -> differences.add(name + ": listed twice"));
        table.forEach((name, row) -> {
            if (name.startsWith("dht.")) {
                return;
            }
            JsonNode property = metadata.get(name);
            if (property == null) {
                differences.add(name + ": in the table, but Spring Boot has no such setting");
                return;
            }
            Row wanted = new Row(shownDefault(name, property), row.meaning());
            if (!wanted.matches(row)) {
                differences.add(name + ": the table has\n  " + row.line(name) + "\n  the default is\n  " + wanted.line(name));
            }
        });
        assertThat(table.keySet()).as("Spring Boot's settings in %s", REFERENCE).contains("server.port");
        assertThat(differences).as("%s against Spring Boot's metadata and application.yml", REFERENCE).isEmpty();
    }

    /** A default as the table shows it (null: none declared): application.yml's, else the metadata's. */
    private static String shownDefault(String name, JsonNode property) {
        Object yml = applicationYml.getProperty(name);
        JsonNode declared = property.get("defaultValue");
        String value = yml != null ? yml.toString() : declared != null && declared.isValueNode() ? declared.asString() : null;
        return value == null ? null : value.isEmpty() ? "empty" : "`" + value + "`";
    }

    /** The Javadoc the processor copied, as the table's Markdown: code spans, one line, no cell separator. */
    private static String description(JsonNode property) {
        return property.path("description").asString().replaceAll("\\{@code ([^}]*)}", "`$1`")
                .replaceAll("\\s+", " ").strip().replace("|", "\\|");
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
