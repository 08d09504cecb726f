package dev.dht.cli;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/**
 * Follows a membership change until it ends, polling a member's {@code GET /actuator/cluster} every
 * {@link #POLL}: the node asked, or another member when the node asked is the one leaving (it is no member once the
 * change completed). Draws the phase and the streamed records on stderr (in place on a console). The change ended
 * once the view holds no change for the same node; it completed if the node is a member afterwards for a join and
 * is none for a decommission or removenode, else it was rolled back. Blocks the calling thread.
 */
final class ChangeWait {
    /** Between two reads of the view. */
    static final Duration POLL = Duration.ofMillis(500);
    /** Longest time the member watched may stay unreachable (a restart, a leader change) before the wait fails. */
    static final Duration UNREACHABLE_LIMIT = Duration.ofSeconds(60);
    private static final List<String> PHASES = List.of("write-both-read-old", "streaming", "write-both-read-new");
    private final CliContext context;
    private final ActuatorClient client;

    /** How a change ended, and the view that says so. */
    record Outcome(boolean completed, JsonNode view) {
    }

    ChangeWait(CliContext context, ActuatorClient client) {
        this.context = context;
        this.client = client;
    }

    /** Waits until the change of {@code kind} ({@code join}, {@code decommission}, {@code removenode}) of {@code node} ends. */
    Outcome follow(URI node, String kind) {
        ActuatorClient watched = watched(node);
        long unreachableSince = -1;
        String drawn = "";
        while (true) {
            JsonNode view;
            try {
                view = watched.get("cluster");
                unreachableSince = -1;
            } catch (CliFailure unreachable) {
                if (unreachable.exitCode() != Dht.EXIT_UNREACHABLE) {
                    throw unreachable;
                }
                long now = System.nanoTime();
                if (unreachableSince < 0) {
                    unreachableSince = now;
                } else if (now - unreachableSince > UNREACHABLE_LIMIT.toNanos()) {
                    throw new CliFailure(Dht.EXIT_UNREACHABLE, "lost the change of " + node + ": "
                            + unreachable.getMessage());
                }
                sleep();
                continue;
            }
            JsonNode change = view.path("change");
            if (!change.isObject() || !change.path("node").asString().equals(node.toString())) {
                if (context.terminal() && !drawn.isEmpty()) {
                    context.err().println();
                }
                boolean member = ChangeCommands.members(view).contains(node);
                return new Outcome(kind.equals("join") == member, view);
            }
            String progress = progress(change);
            if (!progress.equals(drawn)) {
                if (context.terminal()) {
                    context.err().print("\r" + progress + "   ");
                    context.err().flush();
                } else {
                    context.err().println(progress);
                }
                drawn = progress;
            }
            sleep();
        }
    }

    /** The client of the member to watch: not {@code node} itself if it is the node asked. */
    private ActuatorClient watched(URI node) {
        JsonNode status;
        try {
            status = client.get("cluster/status");
        } catch (CliFailure unknown) {
            return client;
        }
        URI self = URI.create(status.path("self").asString());
        List<URI> members = ChangeCommands.members(status);
        if (!self.equals(node)) {
            return client;
        }
        return members.stream().filter(member -> !member.equals(node)).findFirst()
                .map(other -> client.at(MemberActuators.of(other, client.base(), self)))
                .orElse(client);
    }

    /** {@code decommission http://h:8083 [############------] streaming (2/3), streamed 1234 records (5.6 MiB)}: the
     * records the node watched stored from streams. */
    static String progress(JsonNode change) {
        String phase = change.path("phase").asString();
        int step = PHASES.indexOf(phase) + 1;
        String bar;
        if (step == 0) {
            bar = "[ rolling back ] " + phase;
        } else {
            bar = "[" + "#".repeat(step * 6) + "-".repeat((PHASES.size() - step) * 6) + "] " + phase + " ("
                    + step + "/" + PHASES.size() + ")";
        }
        JsonNode streamed = change.path("streamed");
        return String.format(Locale.ROOT, "%s %s %s, streamed %d records (%s)", change.path("kind").asString(),
                change.path("node").asString(), bar, streamed.path("records").asLong(),
                StatusCommand.bytes(streamed.path("bytes").asLong()));
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(Dht.EXIT_UNREACHABLE, "interrupted");
        }
    }
}
