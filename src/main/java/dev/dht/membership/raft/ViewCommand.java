package dev.dht.membership.raft;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;

/**
 * One entry of the view log: "if the view is at epoch {@code expect}, it becomes {@code next}". Text: a line
 * {@code cas EXPECT} followed by {@code next} in {@link ClusterViewFile}'s format. The state machine answers
 * {@link #ACCEPTED} or a line that starts with {@code refused}.
 *
 * @param expect the epoch the log's view must have (0: the cluster is not formed yet)
 * @param next   the view that replaces it; its epoch is {@code expect + 1}
 */
public record ViewCommand(long expect, ClusterView next) {
    /** The state machine's answer when the view was replaced. */
    public static final String ACCEPTED = "accepted";
    private static final String REFUSED = "refused ";

    /** @throws IllegalArgumentException if {@code next}'s epoch is not {@code expect + 1} */
    public ViewCommand {
        if (next.epoch() != expect + 1) {
            throw new IllegalArgumentException("a view of epoch " + next.epoch() + " cannot follow epoch " + expect);
        }
    }

    /** This command as log text. */
    public String encode() {
        return "cas " + expect + "\n" + ClusterViewFile.encode(next);
    }

    /**
     * The command in {@code text}.
     *
     * @throws IllegalArgumentException if it is malformed
     */
    public static ViewCommand decode(String text) {
        int end = text.indexOf('\n');
        if (end < 0 || !text.startsWith("cas ")) {
            throw new IllegalArgumentException("not a view command: " + text.lines().findFirst().orElse(""));
        }
        try {
            return new ViewCommand(Long.parseLong(text.substring(4, end).trim()),
                    ClusterViewFile.decode(text.substring(end + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a view command: " + text.substring(0, end));
        }
    }

    /** The state machine's answer for a refused command. */
    static String refusal(String reason) {
        return REFUSED + reason;
    }

    /** The reason of a refusal answer, or null if {@code answer} is {@link #ACCEPTED}. */
    public static String reasonOf(String answer) {
        return answer.startsWith(REFUSED) ? answer.substring(REFUSED.length()) : null;
    }
}
