package dev.dht.metrics;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The PromQL of a Grafana dashboard's JSON: every {@code expr} anywhere in it (panels, panels inside rows,
 * several targets per panel) with the title of its panel, and its query variables. Renders an expression the
 * way Grafana does before sending it: template variables ({@code $name}, {@code ${name}},
 * {@code ${name:format}}) replaced by given values.
 */
final class GrafanaDashboard {
    private static final Pattern VARIABLE = Pattern.compile("\\$(?:\\{(\\w+)(?::[^}]*)?}|(\\w+))");

    /** One expression and where it is. */
    record Query(String panel, String expr) {
    }

    /** A query variable: its name and its query, e.g. {@code label_values(metric, label)}. */
    record Variable(String name, String query) {
    }

    private final JsonNode root;

    private GrafanaDashboard(JsonNode root) {
        this.root = root;
    }

    static GrafanaDashboard read(Path file) {
        return new GrafanaDashboard(JsonMapper.shared().readTree(file));
    }

    /** Every {@code expr} of the dashboard, in document order. */
    List<Query> queries() {
        List<Query> queries = new ArrayList<>();
        collect(root, "(dashboard)", queries);
        return queries;
    }

    /** The variables of type {@code query}. */
    List<Variable> queryVariables() {
        List<Variable> variables = new ArrayList<>();
        for (JsonNode variable : root.path("templating").path("list").values()) {
            if ("query".equals(variable.path("type").asString())) {
                JsonNode query = variable.path("query");
                variables.add(new Variable(variable.path("name").asString(),
                        query.isObject() ? query.path("query").asString() : query.asString()));
            }
        }
        return variables;
    }

    /**
     * {@code expr} with every template variable replaced by its value in {@code values}.
     *
     * @throws IllegalArgumentException naming a variable that has no value
     */
    static String render(String expr, Map<String, String> values) {
        Matcher matcher = VARIABLE.matcher(expr);
        StringBuilder rendered = new StringBuilder();
        while (matcher.find()) {
            String name = matcher.group(1) != null ? matcher.group(1) : matcher.group(2);
            String value = values.get(name);
            if (value == null) {
                throw new IllegalArgumentException("no value for the variable $" + name + " in " + expr);
            }
            matcher.appendReplacement(rendered, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(rendered);
        return rendered.toString();
    }

    private static void collect(JsonNode node, String panel, List<Query> queries) {
        if (node.isObject()) {
            String title = node.has("title") && node.has("type") ? node.path("title").asString() : panel;
            JsonNode expr = node.get("expr");
            if (expr != null && expr.isString() && !expr.asString().isBlank()) {
                queries.add(new Query(title, expr.asString()));
            }
            node.properties().forEach(entry -> collect(entry.getValue(), title, queries));
        } else if (node.isArray()) {
            node.values().forEach(child -> collect(child, panel, queries));
        }
    }
}
