package dev.dht;

import dev.dht.backup.restore.RestoreCommand;
import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FilterType;

/**
 * Entry point. {@code java -jar dht.jar [--setting=value ...]} runs one node; {@code java -jar dht.jar
 * local-cluster} runs a 3-node cluster on this machine ({@link LocalCluster}); {@code java -jar dht.jar restore ...}
 * restores a backup into a cluster ({@link RestoreCommand}).
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
     * Starts a node, the local cluster when the first argument is {@code local-cluster}, or a restore of a backup
     * when it is {@code restore} ({@link RestoreCommand}).
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && LocalCluster.COMMAND.equals(args[0])) {
            LocalCluster.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && RestoreCommand.COMMAND.equals(args[0])) {
            RestoreCommand.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        SpringApplication.run(DhtApplication.class, args);
    }
}
