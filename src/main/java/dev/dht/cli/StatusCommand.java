package dev.dht.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import tools.jackson.databind.JsonNode;

/**
 * {@code dht status}: the cluster as the node asked sees it ({@code GET /actuator/cluster/status}), as
 * {@code nodetool status} shows one: the epoch, replication factor, view-log leader and change in progress, then one
 * row per member. Exit 0 once printed.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = {"The cluster as the node asked sees it, one row per member.",
            "Above the rows: epoch, replication factor, view-log leader, the change "
            + "in progress (phase, streamed). Per member: up or down (a member that does not answer the node "
            + "within 3 s is down), state, URL, records and bytes on disk, share of the key space it replicates "
            + "(OWNS), hints held for it, view-log role.",
            "--output json prints GET /actuator/cluster/status: {\"epoch\", \"replicationFactor\", \"leader\", "
            + "\"change\", \"members\": [{\"node\", \"state\", \"up\", \"records\", \"bytes\", \"ownership\", "
            + "\"hints\", \"role\"}], ...}."})
final class StatusCommand implements Callable<Integer> {
    private final CliContext context;
    @Mixin
    private ConnectionOptions connection;

    StatusCommand(CliContext context) {
        this.context = context;
    }

    @Override
    public Integer call() {
        JsonNode status = connection.client().get("cluster/status");
        if (connection.output() == ConnectionOptions.Output.json) {
            context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(status));
        } else {
            context.out().print(table(status));
        }
        return Dht.EXIT_OK;
    }

    /** The text of {@code status}: a header, then the members' rows. */
    static String table(JsonNode status) {
        StringBuilder text = new StringBuilder();
        text.append("epoch ").append(status.path("epoch").asLong())
                .append(", replication factor ").append(status.path("replicationFactor").asInt())
                .append(", leader ").append(status.path("leader").isNull() ? "none" : status.path("leader").asString())
                .append(" (as ").append(status.path("self").asString()).append(" sees it)\n");
        JsonNode change = status.path("change");
        text.append("change: ").append(change.isObject() ? describeChange(change) : "none").append('\n');
        if (status.path("cleanupPending").asBoolean()) {
            text.append("cleanup pending on ").append(status.path("self").asString())
                    .append(" (the next change waits for it)\n");
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"UP", "STATE", "NODE", "RECORDS", "BYTES", "OWNS", "HINTS", "ROLE"});
        for (JsonNode member : status.path("members")) {
            rows.add(new String[] {
                member.path("up").asBoolean() ? "UP" : "DOWN",
                member.path("state").asString(),
                member.path("node").asString(),
                member.path("records").isNumber() ? Long.toString(member.path("records").asLong()) : "?",
                member.path("bytes").isNumber() ? bytes(member.path("bytes").asLong()) : "?",
                member.path("ownership").isNumber()
                        ? String.format(Locale.ROOT, "%.1f%%", member.path("ownership").asDouble() * 100) : "?",
                Long.toString(member.path("hints").asLong()),
                member.path("role").isNull() || member.path("role").isMissingNode() ? "-" : member.path("role").asString()
            });
        }
        text.append(Table.of(rows));
        return text.toString();
    }

    /** A change as one line: kind, node, phase, streamed. */
    static String describeChange(JsonNode change) {
        JsonNode streamed = change.path("streamed");
        return change.path("kind").asString() + " " + change.path("node").asString()
                + ", phase " + change.path("phase").asString()
                + ", streamed " + streamed.path("records").asLong() + " records ("
                + bytes(streamed.path("bytes").asLong()) + ") here";
    }

    /** {@code bytes} in B, KiB, MiB, GiB or TiB with one decimal. */
    static String bytes(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
