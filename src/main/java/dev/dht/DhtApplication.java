package dev.dht;

import dev.dht.cli.Dht;
import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * Entry point. {@code java -jar dht.jar} with no arguments or settings only ({@code --name.with.dots=value}) runs one
 * node; {@code java -jar dht.jar local-cluster} runs a 3-node cluster on this machine ({@link LocalCluster});
 * anything else is the operator's command line ({@link Dht}: {@code status}, {@code decommission}, {@code restore},
 * ...), which starts no server and refuses an unknown command or option with its usage (exit 2).
 *
 * <p>As {@code @SpringBootApplication}, except that the scan leaves out {@link ManagementContextConfiguration}
 * classes: Spring Boot imports them into the context that serves the actuator, which is a child context of its own
 * when {@code management.server.port} differs from the server port.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@ComponentScan(excludeFilters = {
    @ComponentScan.Filter(type = FilterType.CUSTOM, classes = TypeExcludeFilter.class),
    @ComponentScan.Filter(type = FilterType.CUSTOM, classes = AutoConfigurationExcludeFilter.class),
    @ComponentScan.Filter(type = FilterType.ANNOTATION, classes = ManagementContextConfiguration.class)})
public class DhtApplication {

    /**
     * Starts a node, the local cluster when the first argument is {@code local-cluster}, or runs a command of the
     * command line ({@link Dht}). A node started as a {@link TrainingRun} sends itself its training requests once it
     * has started, then exits.
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && LocalCluster.COMMAND.equals(args[0])) {
            LocalCluster.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (Dht.isCommand(args)) {
            Dht.main(args);
            return;
        }
        ConfigurableApplicationContext context = SpringApplication.run(DhtApplication.class, args);
        if (TrainingRun.requested()) {
            System.exit(TrainingRun.run(context));
        }
    }
}
