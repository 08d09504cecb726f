package dev.dht.cli;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

/**
 * The membership changes: {@code decommission}, {@code removenode} and {@code abort}, each a
 * {@code POST /actuator/cluster/ACTION} to the node asked, which answers once the view log took the change's first
 * step. With {@code --wait} the command then follows the change ({@link ChangeWait}) until it ends.
 */
final class ChangeCommands {
    private static final String WAIT = "Follow the change until it ends (progress on stderr): exit 0 when it "
            + "completed, 3 when it was rolled back.";

    private ChangeCommands() {
    }

    /** {@code dht decommission [--node URL] [--wait]}. */
    @Command(name = "decommission", mixinStandardHelpOptions = true,
            description = {"Decommissions a member.", "It streams its records to the members that gain them, then leaves."
                + " Refused (exit 2, the reason on stderr) while a member is down, another change runs or a cleanup "
                + "is pending."})
    static final class Decommission implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Option(names = "--node", paramLabel = "URL", description = "The member to decommission, by its URL in the "
                + "view (default: the node asked).")
        private URI node;
        @Option(names = "--wait", description = WAIT)
        private boolean wait;

        Decommission(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            Map<String, Object> body = new LinkedHashMap<>();
            if (node != null) {
                body.put("node", node.toString());
            }
            return start(context, connection, "decommission", body, wait, false);
        }
    }

    /** {@code dht removenode URL [--wait]}. */
    @Command(name = "removenode", mixinStandardHelpOptions = true,
            description = {"Removes a dead member.", "The others re-replicate its keys from the surviving copies. Refused "
                + "(exit 2) while it still answers: decommission it instead."})
    static final class Removenode implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Parameters(paramLabel = "URL", description = "The member to remove, by its URL in the view.")
        private URI node;
        @Option(names = "--wait", description = WAIT)
        private boolean wait;

        Removenode(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            return start(context, connection, "removenode", Map.of("node", node.toString()), wait, false);
        }
    }

    /** {@code dht abort [--wait]}. */
    @Command(name = "abort", mixinStandardHelpOptions = true,
            description = {"Aborts the change in progress.", "It is rolled back. Refused (exit 2) when none runs."})
    static final class Abort implements Callable<Integer> {
        private final CliContext context;
        @Mixin
        private ConnectionOptions connection;
        @Option(names = "--wait", description = "Follow the change until it ends: exit 0 when it was rolled back, 3 "
                + "when it completed before the abort took effect.")
        private boolean wait;

        Abort(CliContext context) {
            this.context = context;
        }

        @Override
        public Integer call() {
            return start(context, connection, "abort", null, wait, true);
        }
    }

    /**
     * Starts {@code action}, prints what the node answered, and with {@code wait} follows the change.
     *
     * @param abort an abort: its success is the change's rollback
     */
    private static int start(CliContext context, ConnectionOptions connection, String action, Map<String, Object> body,
                             boolean wait, boolean abort) {
        ActuatorClient client = connection.client();
        JsonNode view = client.post("cluster/" + action, body, ActuatorClient.ANSWER_TIMEOUT).json();
        JsonNode change = view == null ? null : view.path("change");
        boolean json = connection.output() == ConnectionOptions.Output.json;
        if (json && !wait) {
            context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(view));
        } else if (!json) {
            context.out().println(action + ": " + (change != null && change.isObject()
                    ? StatusCommand.describeChange(change) + " (epoch " + view.path("epoch").asLong() + ")"
                    : "no change in progress (epoch " + (view == null ? "?" : view.path("epoch").asLong()) + ")"));
        }
        if (!wait || change == null || !change.isObject()) {
            return Dht.EXIT_OK;
        }
        ChangeWait.Outcome outcome = new ChangeWait(context, client).follow(
                URI.create(change.path("node").asString()), change.path("kind").asString());
        if (json) {
            context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter()
                    .writeValueAsString(outcome.view()));
        } else {
            context.out().println(outcome.completed()
                    ? change.path("kind").asString() + " of " + change.path("node").asString() + " completed"
                    : change.path("kind").asString() + " of " + change.path("node").asString() + " rolled back");
        }
        return outcome.completed() != abort ? Dht.EXIT_OK : Dht.EXIT_FAILED;
    }

    /** The member URLs of a view document. */
    static List<URI> members(JsonNode view) {
        return view.path("members").valueStream().map(member -> URI.create(member.path("node").asString())).toList();
    }
}
