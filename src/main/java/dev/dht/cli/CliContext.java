package dev.dht.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;

/**
 * What a command takes from the process that runs it, passed in so that tests run commands in their own JVM.
 *
 * @param environment where {@code DHT_HOST}, {@code DHT_CLUSTER_SECRET} and the TLS defaults are looked up
 * @param out         the command's answer
 * @param err         errors and progress
 * @param terminal    stdout is a console: progress is drawn in place instead of printed line by line
 * @param workingDir  where a local cluster's {@code data/} is looked for ({@link LocalClusterSecret})
 */
public record CliContext(Map<String, String> environment, PrintStream out, PrintStream err, boolean terminal,
                         Path workingDir) {

    /** The JVM's own environment, streams and working directory. */
    public static CliContext ofProcess() {
        return new CliContext(System.getenv(), System.out, System.err, System.console() != null, Path.of(""));
    }
}
