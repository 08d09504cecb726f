package dev.dht.cli;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

/**
 * {@code dht backup start|list|status|delete}: cluster backups to the nodes' {@code dht.backup.location}, through
 * {@code POST /actuator/backup} and {@code /actuator/backups[/ID]} (docs/backup.md).
 */
@Command(name = "backup", mixinStandardHelpOptions = true,
        description = "Cluster backups to the nodes' dht.backup.location: start, list, status, delete.",
        subcommands = {BackupCommand.Start.class, BackupCommand.ListBackups.class, BackupCommand.Status.class,
            BackupCommand.Delete.class})
final class BackupCommand implements Runnable {
    /** Between two reads of a running backup. */
    static final Duration POLL = Duration.ofSeconds(1);
    @Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "backup needs a command: start, list, status or"
                + " delete");
    }

    /** {@code dht backup start [--allow-missing] [--incremental] [--wait]}. */
    @Command(name = "start", mixinStandardHelpOptions = true,
            description = {"Starts a backup of the whole cluster.", "Coordinated by the node asked; prints its id. "
                + "Refused (exit 2) with no location set or another backup running there.",
                "With --incremental, stores only what changed since the newest done backup at the location (its "
                + "base; a restore applies the chain); a full backup, saying why, where there is none or it is older "
                + "than the tombstone GC grace allows.",
                "With --wait, follows it (progress on stderr) until it ends and prints the id alone on the last line"
                + " of stdout: exit 0 done, 3 failed."})
    static final class Start implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Option(names = "--allow-missing", description = "Complete without members that are down or fail, as far as"
                + " the node allows (docs/backup.md).")
        private boolean allowMissing;
        @Option(names = "--incremental", description = "Only what changed since the newest done backup (docs/backup.md).")
        private boolean incremental;
        @Option(names = "--wait", description = "Follow the backup until it ends.")
        private boolean wait;

        Start(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            ActuatorClient client = connection.client();
            Map<String, Object> body = new LinkedHashMap<>();
            if (allowMissing) {
                body.put("allowMissing", true);
            }
            if (incremental) {
                body.put("incremental", true);
            }
            JsonNode answer = client.post("backup", body.isEmpty() ? null : body, ActuatorClient.ANSWER_TIMEOUT).json();
            String id = answer.path("id").asString();
            String started = "backup " + id + " started" + (answer.hasNonNull("base")
                    ? ", incremental to " + answer.path("base").asString()
                    : answer.hasNonNull("fullReason") ? ", full: " + answer.path("fullReason").asString() : "");
            if (!wait) {
                print(context, connection, answer, started + "\n" + id);
                return Dht.EXIT_OK;
            }
            context.err().println(started);
            JsonNode backup = follow(context, client, id);
            boolean done = "done".equals(backup.path("state").asString());
            if (connection.output() == ConnectionOptions.Output.json) {
                context.err().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(backup));
            } else {
                context.err().println(describe(backup));
            }
            context.out().println(id);
            return done ? Dht.EXIT_OK : Dht.EXIT_FAILED;
        }
    }

    /** {@code dht backup list}. */
    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"Lists the backups, newest first.", "Id, state (running, done, failed), base (the backup an "
                + "incremental one holds the changes since; - for a full one), start, end, records, bytes.",
                "--output json prints [{\"id\", \"state\", \"startedAt\", \"endedAt\", \"base\", \"records\", "
                + "\"bytes\", \"nodes\", \"error\"?, \"missing\"?}, ...]."})
    static final class ListBackups implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;

        ListBackups(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            JsonNode answer = connection.client().get("backups");
            JsonNode backups = answer.path("backups");
            if (connection.output() == ConnectionOptions.Output.json) {
                context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(backups));
                return Dht.EXIT_OK;
            }
            context.out().println("location " + answer.path("location").asString());
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"ID", "STATE", "BASE", "STARTED", "ENDED", "RECORDS", "BYTES", "NOTE"});
            for (JsonNode backup : backups) {
                rows.add(new String[] {backup.path("id").asString(), backup.path("state").asString(),
                    backup.hasNonNull("base") ? backup.path("base").asString() : "-",
                    time(backup.path("startedAt")), time(backup.path("endedAt")),
                    Long.toString(backup.path("records").asLong()), StatusCommand.bytes(backup.path("bytes").asLong()),
                    note(backup)});
            }
            context.out().print(Table.of(rows));
            return Dht.EXIT_OK;
        }
    }

    /** {@code dht backup status ID}. */
    @Command(name = "status", mixinStandardHelpOptions = true,
            description = {"Shows one backup.", "Its state, records per member and, while it runs on the node asked, its "
                + "progress. Exit 2 if unknown.", "--output json prints GET /actuator/backups/ID."})
    static final class Status implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Parameters(paramLabel = "ID", description = "The backup's id.")
        private String id;

        Status(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            JsonNode backup = connection.client().get("backups/" + id);
            print(context, connection, backup, describe(backup));
            return Dht.EXIT_OK;
        }
    }

    /** {@code dht backup delete ID}. */
    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = {"Deletes one backup.", "Its files and manifest. Refused (exit 2) while it runs, or if unknown."})
    static final class Delete implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Parameters(paramLabel = "ID", description = "The backup's id.")
        private String id;

        Delete(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            connection.client().delete("backups/" + id);
            if (connection.output() == ConnectionOptions.Output.table) {
                context.out().println("backup " + id + " deleted");
            }
            return Dht.EXIT_OK;
        }
    }

    /** Polls backup {@code id} until it is no longer running; progress on stderr. Blocks. */
    static JsonNode follow(CliContext context, ActuatorClient client, String id) {
        String drawn = "";
        while (true) {
            JsonNode backup = client.get("backups/" + id);
            if (!"running".equals(backup.path("state").asString())) {
                if (context.terminal() && !drawn.isEmpty()) {
                    context.err().println();
                }
                return backup;
            }
            JsonNode progress = backup.path("progress");
            String line = "backup " + id + ": " + (progress.isObject()
                    ? progress.path("membersDone").asLong() + "/" + progress.path("members").asLong()
                        + " members done, " + progress.path("records").asLong() + " records written"
                    : "running");
            if (!line.equals(drawn)) {
                if (context.terminal()) {
                    context.err().print("\r" + line + "   ");
                    context.err().flush();
                } else {
                    context.err().println(line);
                }
                drawn = line;
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliFailure(Dht.EXIT_UNREACHABLE, "interrupted");
            }
        }
    }

    /** A backup as a few lines: id, state, times, records and bytes, each member's records, progress. */
    static String describe(JsonNode backup) {
        StringBuilder text = new StringBuilder();
        text.append("backup ").append(backup.path("id").asString()).append(": ").append(backup.path("state").asString())
                .append(", started ").append(time(backup.path("startedAt")))
                .append(", ended ").append(time(backup.path("endedAt")))
                .append(", ").append(backup.path("records").asLong()).append(" records, ")
                .append(StatusCommand.bytes(backup.path("bytes").asLong()));
        if (backup.hasNonNull("base")) {
            text.append("\n  incremental to ").append(backup.path("base").asString()).append(": records stamped since ")
                    .append(backup.path("since").asString());
        }
        String note = note(backup);
        if (!note.isEmpty()) {
            text.append("\n  ").append(note);
        }
        backup.path("nodes").properties().forEach(node -> text.append("\n  ").append(node.getKey()).append(": ")
                .append(node.getValue().asLong()).append(" records"));
        JsonNode progress = backup.path("progress");
        if (progress.isObject()) {
            text.append("\n  progress: ").append(progress.path("membersDone").asLong()).append('/')
                    .append(progress.path("members").asLong()).append(" members done, ")
                    .append(progress.path("records").asLong()).append(" records written");
        }
        return text.toString();
    }

    private static String note(JsonNode backup) {
        List<String> notes = new ArrayList<>();
        if (backup.hasNonNull("error")) {
            notes.add("error: " + backup.path("error").asString());
        }
        if (backup.path("missing").isArray() && !backup.path("missing").isEmpty()) {
            List<String> missing = new ArrayList<>();
            backup.path("missing").forEach(node -> missing.add(node.asString()));
            notes.add("missing: " + String.join(", ", missing));
        }
        if (backup.hasNonNull("fullReason")) {
            notes.add("full: " + backup.path("fullReason").asString());
        }
        return String.join("; ", notes);
    }

    /** An epoch-millis or ISO time as ISO-8601 UTC to the second; {@code -} if absent. */
    private static String time(JsonNode value) {
        if (value.isNumber()) {
            long millis = value.asLong();
            return millis <= 0 ? "-" : Instant.ofEpochMilli(millis).truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                    .toString();
        }
        return value.isMissingNode() || value.isNull() || value.asString().isEmpty() ? "-" : value.asString();
    }

    private static void print(CliContext context, ConnectionOptions connection, JsonNode json, String text) {
        if (connection.output() == ConnectionOptions.Output.json) {
            context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json));
        } else {
            context.out().println(text);
        }
    }
}
