package dev.dht;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The packages of the main code form a graph without cycles (each Java package is a node, sub-packages
 * included: {@code dev.dht.peer} and {@code dev.dht.peer.server} are two). A cycle would tie its packages into
 * one unit that can be understood, tested and changed only as a whole. Apache Ratis is used in
 * {@code dev.dht.membership.raft} only: the rest of the code knows the view log by its own types. The node-to-node
 * protocol ({@code dev.dht.peer} and below) knows its endpoints, not the features that serve them.
 */
class PackageCyclesTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.dht");

    @Test
    void mainPackagesAreFreeOfCycles() {
        slices().matching("dev.dht.(**)").should().beFreeOfCycles().check(MAIN);
    }

    /**
     * Each feature serves its own {@code /internal/*} endpoints (as Cassandra keeps a verb's handler with its
     * feature): {@code peer} holds the protocol (endpoints, codecs, client, the routing of endpoints to the handlers
     * the features register, the guards of every internal route) and depends on no feature package.
     */
    @Test
    void thePeerProtocolDependsOnNoFeature() {
        noClasses().that().resideInAPackage("dev.dht.peer..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.dht.api..", "dev.dht.backup..",
                        "dev.dht.cli..", "dev.dht.config..", "dev.dht.membership..", "dev.dht.repair..",
                        "dev.dht.replication..", "dev.dht.web..")
                .check(MAIN);
    }

    @Test
    void onlyTheViewLogPackageUsesRatis() {
        noClasses().that().resideOutsideOfPackage("dev.dht.membership.raft..")
                .should().dependOnClassesThat().resideInAPackage("org.apache.ratis..")
                .check(MAIN);
    }
}
