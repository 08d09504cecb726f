package dev.dht.membership;

/**
 * A membership change that cannot start or go on now: another change is in progress, a member is down, a member
 * still cleans up after the last change, or the view moved on. Answered 409 with its one-line message; nothing
 * changed.
 */
public class ChangeRefusedException extends RuntimeException {
    /** @param message one line naming the node and the reason */
    public ChangeRefusedException(String message) {
        super(message, null, false, false);
    }
}
