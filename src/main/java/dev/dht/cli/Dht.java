package dev.dht.cli;

import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code dht}, the operator's command line: {@code java -jar dht.jar COMMAND [OPTIONS]} or {@code bin/dht COMMAND}.
 * Each command asks one node's actuator over HTTP (the JDK's client); none starts a server, so a command answers in
 * about a second. Parsing, usage and help are picocli's. Exit statuses: {@link #EXIT_OK}, {@link #EXIT_UNREACHABLE},
 * {@link #EXIT_REFUSED} (also for bad arguments: picocli's usage status), {@link #EXIT_FAILED}.
 * Blocking: a command runs on the calling thread.
 */
@Command(name = "dht", mixinStandardHelpOptions = true, versionProvider = Dht.Version.class,
        description = "The operator's command line of a dht cluster: asks one node's actuator (--host).",
        subcommands = {StatusCommand.class, ChangeCommands.Decommission.class, ChangeCommands.Removenode.class,
            ChangeCommands.Abort.class, RepairCommand.class, BackupCommand.class, RestoreCommands.Restore.class,
            RestoreCommands.Verify.class, CommandLine.HelpCommand.class},
        footer = {"", "Without a command, or with settings only (--dht.x=y, --server.port=P), java -jar dht.jar runs a"
            + " node; java -jar dht.jar local-cluster runs a 3-node cluster on this machine."})
public final class Dht {
    /** The command did what it was asked. */
    public static final int EXIT_OK = 0;
    /** The host could not be reached, did not answer in time, or answered something unexpected. */
    public static final int EXIT_UNREACHABLE = 1;
    /** The node refused (400, 403, 404, 409: the reason on stderr), or the arguments are wrong. */
    public static final int EXIT_REFUSED = 2;
    /** What was started ended badly: a change rolled back; a backup, repair, restore or verify failed. */
    public static final int EXIT_FAILED = 3;
    /** The exit statuses as every command's help lists them (restore and verify say theirs in their description). */
    private static final Map<String, String> EXIT_CODES = exitCodes();
    /** The commands, for {@link #isCommand}. */
    private static final Set<String> COMMANDS = Set.of("status", "decommission", "removenode", "abort", "repair",
            "backup", "restore", "verify", "help");

    /**
     * Whether {@code args} ask for the command line rather than a node: anything but nothing at all or settings only
     * ({@code --name.with.dots=value}, Spring Boot's command-line properties). An unknown word or option is the
     * command line's too, which refuses it with the usage.
     */
    public static boolean isCommand(String[] args) {
        for (String arg : args) {
            if (!isSetting(arg)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isSetting(String arg) {
        int equals = arg.indexOf('=');
        return arg.startsWith("--") && equals > 2 && arg.substring(2, equals).contains(".");
    }

    /** Whether {@code name} is one of the commands (not counting {@code local-cluster}, which runs nodes). */
    public static boolean isCommandName(String name) {
        return COMMANDS.contains(name);
    }

    /** Runs {@code args} in the JVM's environment and exits with the command's status. */
    public static void main(String[] args) {
        System.exit(run(args, CliContext.ofProcess()));
    }

    /** Runs {@code args} in {@code context}; returns the exit status. */
    public static int run(String[] args, CliContext context) {
        CommandLine commandLine = new CommandLine(new Dht(), new Factory(context));
        listExitCodes(commandLine);
        PrintWriter out = new PrintWriter(context.out(), true);
        PrintWriter err = new PrintWriter(context.err(), true);
        commandLine.setOut(out).setErr(err);
        commandLine.setExecutionExceptionHandler((failure, command, parsed) -> {
            if (failure instanceof CliFailure cli) {
                err.println("dht " + command.getCommandName() + ": " + cli.getMessage());
                return cli.exitCode();
            }
            err.println("dht " + command.getCommandName() + ": " + failure);
            return EXIT_UNREACHABLE;
        });
        commandLine.setParameterExceptionHandler((bad, arguments) -> {
            CommandLine command = bad.getCommandLine();
            err.println("dht: " + bad.getMessage());
            command.usage(err);
            return EXIT_REFUSED;
        });
        int status = commandLine.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    private static Map<String, String> exitCodes() {
        Map<String, String> codes = new LinkedHashMap<>();
        codes.put(" " + EXIT_OK, "done");
        codes.put(" " + EXIT_UNREACHABLE, "cannot reach the host, or a bad answer");
        codes.put(" " + EXIT_REFUSED, "refused by the node (its reason on stderr), or bad arguments");
        codes.put(" " + EXIT_FAILED, "rolled back or failed");
        return codes;
    }

    /** Puts {@link #EXIT_CODES} in the help of {@code command} and of its subcommands but restore and verify. */
    private static void listExitCodes(CommandLine command) {
        String name = command.getCommandName();
        if (!name.equals("restore") && !name.equals("verify") && !name.equals("help")) {
            command.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(EXIT_CODES);
        }
        command.getSubcommands().values().forEach(Dht::listExitCodes);
    }

    /** Makes commands and mixins that take the {@link CliContext} with it, others as picocli does. */
    private record Factory(CliContext context) implements CommandLine.IFactory {
        @Override
        public <K> K create(Class<K> type) throws Exception {
            for (Constructor<?> constructor : type.getDeclaredConstructors()) {
                Class<?>[] parameters = constructor.getParameterTypes();
                if (parameters.length == 1 && parameters[0] == CliContext.class) {
                    constructor.setAccessible(true);
                    return type.cast(constructor.newInstance(context));
                }
            }
            return CommandLine.defaultFactory().create(type);
        }
    }

    /** The jar's version, from its manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Dht.class.getPackage().getImplementationVersion();
            return new String[] {"dht " + (version == null ? "(development build)" : version)};
        }
    }
}
