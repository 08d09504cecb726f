package dev.dht.cli;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;

/**
 * {@code dht repair [--all]}: {@code POST /actuator/repair} to the node asked, or to every member in turn, each of
 * which repairs itself with each of its peers (Merkle anti-entropy). The node answers once its repairs are done, so
 * the command always waits for them. Exit 0 when every repair completed, 3 when one failed.
 */
@Command(name = "repair", mixinStandardHelpOptions = true,
        description = {"Repairs the node asked, or every member (--all).", "Anti-entropy with each of its peers, "
            + "member after member with --all; prints each repair: records pulled and pushed, time. Waits until done (the node answers "
            + "then); exit 3 if a repair failed.",
            "--output json prints the actuator's answers: [{\"peer\", \"pulled\", \"pushed\", \"millis\", "
            + "\"error\", ...}], with \"node\" added to each."})
final class RepairCommand implements Callable<Integer> {
    private final CliContext context;
    @Mixin
    private ConnectionOptions connection;
    @Option(names = "--all", description = "Every member of the view in turn, not only the node asked.")
    private boolean all;

    RepairCommand(CliContext context) {
        this.context = context;
    }

    @Override
    public Integer call() {
        ActuatorClient client = connection.client();
        List<ActuatorClient> targets = new ArrayList<>();
        List<String> names = new ArrayList<>();
        if (all) {
            JsonNode status = client.get("cluster/status");
            URI self = URI.create(status.path("self").asString());
            for (URI member : ChangeCommands.members(status)) {
                targets.add(client.at(MemberActuators.of(member, client.base(), self)));
                names.add(member.toString());
            }
        } else {
            targets.add(client);
            names.add(client.base().toString());
        }
        ArrayNode results = ActuatorClient.JSON.createArrayNode();
        boolean failed = false;
        for (int i = 0; i < targets.size(); i++) {
            if (connection.output() == ConnectionOptions.Output.table) {
                context.out().println("repairing " + names.get(i) + " ...");
            }
            JsonNode answer = targets.get(i).post("repair", null, null).json();
            for (JsonNode result : answer) {
                boolean ok = result.path("error").isNull() || result.path("error").isMissingNode();
                failed |= !ok;
                results.add(ActuatorClient.JSON.createObjectNode().put("node", names.get(i)).setAll(
                        (tools.jackson.databind.node.ObjectNode) result));
                if (connection.output() == ConnectionOptions.Output.table) {
                    context.out().println("  with " + result.path("peer").asString() + ": " + (ok
                            ? result.path("pulled").asLong() + " pulled, " + result.path("pushed").asLong()
                                + " pushed, " + result.path("segmentsDiffered").asLong() + " segments differed, "
                                + result.path("millis").asLong() + " ms"
                            : "failed: " + result.path("error").asString()));
                }
            }
        }
        if (connection.output() == ConnectionOptions.Output.json) {
            context.out().println(ActuatorClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(results));
        }
        return failed ? Dht.EXIT_FAILED : Dht.EXIT_OK;
    }
}
