package dev.dht;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The packages of the main code form a graph without cycles (each Java package is a node, sub-packages
 * included: {@code dev.dht.peer} and {@code dev.dht.peer.server} are two). A cycle would tie its packages into
 * one unit that can be understood, tested and changed only as a whole.
 */
class PackageCyclesTest {

    @Test
    void mainPackagesAreFreeOfCycles() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.dht");
        slices().matching("dev.dht.(**)").should().beFreeOfCycles().check(classes);
    }
}
