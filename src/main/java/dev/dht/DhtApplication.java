package dev.dht;

import java.util.Arrays;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Entry point. {@code java -jar dht.jar [--setting=value ...]} runs one node; {@code java -jar dht.jar
 * local-cluster} runs a 3-node cluster on this machine ({@link LocalCluster}).
 */
@SpringBootApplication
public class DhtApplication {

    /** Starts a node, or the local cluster when the first argument is {@code local-cluster}. */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && LocalCluster.COMMAND.equals(args[0])) {
            LocalCluster.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        SpringApplication.run(DhtApplication.class, args);
    }
}
