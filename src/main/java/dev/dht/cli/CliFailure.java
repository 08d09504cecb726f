package dev.dht.cli;

/**
 * A command that cannot do what it was asked, with its exit status ({@link Dht#EXIT_UNREACHABLE},
 * {@link Dht#EXIT_REFUSED}, {@link Dht#EXIT_FAILED}) and the one line printed on stderr.
 */
public final class CliFailure extends RuntimeException {
    private final int exitCode;

    /** A failure that exits with {@code exitCode} after printing {@code message}. */
    public CliFailure(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    /** A failure caused by {@code cause}. */
    public CliFailure(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    /** The process's exit status. */
    public int exitCode() {
        return exitCode;
    }
}
