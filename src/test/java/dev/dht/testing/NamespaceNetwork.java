package dev.dht.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A network of hosts, one Linux network namespace each ({@code dhtnf-nI}, address {@code 10.213.0.(I+1)/24} on a
 * veth pair), joined by a bridge in the root namespace ({@code dhtnf-br}, {@code 10.213.0.254}) so that the test
 * JVM reaches every host directly. Faults act on one host's link: {@link #partition} drops (iptables DROP in the
 * host's namespace, so packets vanish rather than being refused) everything between it and the other hosts while
 * the test JVM still reaches it; {@link #heal} undoes it. Needs root, iproute2 and iptables
 * ({@link #unavailableReason()}). Tests call {@link #remove()} when done. The names are fixed, so {@link #create}
 * first removes what a crashed earlier run left (its processes included); two runs on one machine at once would
 * clash. All methods run commands and block.
 */
public final class NamespaceNetwork {
    private static final String PREFIX = "dhtnf-";
    private static final String BRIDGE = PREFIX + "br";
    private static final String SUBNET = "10.213.0.";
    private static final String BRIDGE_ADDRESS = SUBNET + "254";

    private static final String[] FORWARD_RULE_ADD = {"iptables", "-I", "FORWARD", "-i", BRIDGE, "-o", BRIDGE, "-j",
            "ACCEPT"};
    private static final String[] FORWARD_RULE_DELETE = {"iptables", "-D", "FORWARD", "-i", BRIDGE, "-o", BRIDGE,
            "-j", "ACCEPT"};

    private final int hosts;

    private NamespaceNetwork(int hosts) {
        this.hosts = hosts;
    }

    /** Why this machine cannot build the network (not root, no {@code ip}), or null if it can. */
    public static String unavailableReason() throws IOException, InterruptedException {
        String uid = run("id", "-u");
        if (uid == null || !uid.trim().equals("0")) {
            return "needs root for ip netns and iptables (CI runs as root)";
        }
        if (run("ip", "-V") == null) {
            return "needs iproute2 (the ip command)";
        }
        if (run("iptables", "--version") == null) {
            return "needs iptables";
        }
        return null;
    }

    /**
     * Removes leftovers of an earlier run, then builds {@code hosts} namespaces with lo up, each on the bridge.
     *
     * @throws IllegalStateException if a command fails (what was built is removed again)
     */
    public static NamespaceNetwork create(int hosts) throws IOException, InterruptedException {
        NamespaceNetwork network = new NamespaceNetwork(hosts);
        network.remove();
        try {
            must("ip", "link", "add", BRIDGE, "type", "bridge");
            must("ip", "addr", "add", BRIDGE_ADDRESS + "/24", "dev", BRIDGE);
            must("ip", "link", "set", BRIDGE, "up");
            // with br_netfilter, bridged frames pass the root namespace's FORWARD chain, whose policy may be DROP
            run(FORWARD_RULE_ADD);
            for (int i = 0; i < hosts; i++) {
                String ns = network.namespace(i);
                must("ip", "netns", "add", ns);
                must("ip", "link", "add", outerVeth(i), "type", "veth", "peer", "name", innerVeth(i));
                must("ip", "link", "set", innerVeth(i), "netns", ns);
                must("ip", "link", "set", outerVeth(i), "master", BRIDGE);
                must("ip", "link", "set", outerVeth(i), "up");
                must("ip", "-n", ns, "addr", "add", network.address(i) + "/24", "dev", innerVeth(i));
                must("ip", "-n", ns, "link", "set", innerVeth(i), "up");
                must("ip", "-n", ns, "link", "set", "lo", "up");
            }
            return network;
        } catch (IOException | InterruptedException | RuntimeException e) {
            network.remove();
            throw e;
        }
    }

    /** The IPv4 address of host {@code host}. */
    public String address(int host) {
        return SUBNET + (host + 1);
    }

    /** The namespace of host {@code host}. */
    public String namespace(int host) {
        return PREFIX + "n" + host;
    }

    /** The command prefix that runs a program in host {@code host}'s namespace ({@code ip netns exec} execs it). */
    public List<String> exec(int host) {
        return List.of("ip", "netns", "exec", namespace(host));
    }

    /** Drops every packet between host {@code host} and the other hosts, both ways; the test JVM still reaches it. */
    public void partition(int host) throws IOException, InterruptedException {
        for (int other = 0; other < hosts; other++) {
            if (other != host) {
                iptables(host, "-A", "INPUT", "-s", address(other), "-j", "DROP");
                iptables(host, "-A", "OUTPUT", "-d", address(other), "-j", "DROP");
            }
        }
    }

    /** Removes the partition of host {@code host}. */
    public void heal(int host) throws IOException, InterruptedException {
        iptables(host, "-F", "INPUT");
        iptables(host, "-F", "OUTPUT");
    }

    /**
     * Delays every packet leaving host {@code host} and every packet sent to it by {@code millis} with tc netem, on
     * both ends of its veth pair (so a request and its answer each wait once); false if netem is not available
     * (a kernel without sch_netem answers "Specified qdisc kind is unknown").
     */
    public boolean tryNetemDelay(int host, int millis) throws IOException, InterruptedException {
        String delay = millis + "ms";
        if (run("tc", "qdisc", "add", "dev", outerVeth(host), "root", "netem", "delay", delay) == null) {
            return false;
        }
        must("ip", "netns", "exec", namespace(host), "tc", "qdisc", "add", "dev", innerVeth(host), "root", "netem",
                "delay", delay);
        return true;
    }

    /** Removes the netem delay of {@link #tryNetemDelay}. */
    public void removeNetemDelay(int host) throws IOException, InterruptedException {
        run("tc", "qdisc", "del", "dev", outerVeth(host), "root");
        run("ip", "netns", "exec", namespace(host), "tc", "qdisc", "del", "dev", innerVeth(host), "root");
    }

    /**
     * Kills every process left in the namespaces (SIGKILL), then deletes the namespaces, the bridge's FORWARD
     * rule, veths and bridge; what does not exist is skipped, so it also cleans up after a crashed run.
     */
    public void remove() throws IOException, InterruptedException {
        for (String ns : namespaces()) {
            String pids = run("ip", "netns", "pids", ns);
            if (pids != null && !pids.isBlank()) {
                List<String> kill = new ArrayList<>(List.of("kill", "-9"));
                kill.addAll(List.of(pids.trim().split("\\s+")));
                run(kill.toArray(String[]::new));
                Thread.sleep(200);
            }
            run("ip", "netns", "del", ns);
        }
        while (run(FORWARD_RULE_DELETE) != null) {
            // one rule per run that added it
        }
        String links = run("ip", "-o", "link", "show");
        if (links != null) {
            for (String line : links.split("\n")) {
                String[] fields = line.split(":\\s+", 3);
                if (fields.length > 1 && fields[1].startsWith(PREFIX)) {
                    run("ip", "link", "del", fields[1].replaceFirst("@.*", ""));
                }
            }
        }
    }

    /** Every namespace of this network: the ones it builds, and those a run with more hosts left. */
    private List<String> namespaces() throws IOException, InterruptedException {
        List<String> names = new ArrayList<>();
        String list = run("ip", "netns", "list");
        if (list != null) {
            for (String line : list.split("\n")) {
                String name = line.trim().split("\\s+")[0];
                if (name.startsWith(PREFIX)) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    private void iptables(int host, String... rule) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(exec(host));
        command.add("iptables");
        command.addAll(List.of(rule));
        must(command.toArray(String[]::new));
    }

    private static String outerVeth(int host) {
        return PREFIX + "v" + host;
    }

    private static String innerVeth(int host) {
        return PREFIX + "p" + host;
    }

    private static void must(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + output.trim());
        }
    }

    /** Runs a command; its output, or null if it failed or does not exist. */
    private static String run(String... command) throws InterruptedException {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return process.waitFor() == 0 ? output : null;
        } catch (IOException missing) {
            return null;
        }
    }
}
