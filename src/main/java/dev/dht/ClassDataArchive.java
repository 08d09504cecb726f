package dev.dht;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Optional;

/**
 * The class data sharing (CDS) layout that {@code ./mvnw package} writes beside the executable jar (pom.xml,
 * {@code exec-maven-plugin}, as Spring Boot's "Class Data Sharing" page describes it): {@code cds/dht.jar}, the jar in
 * extracted form with its dependencies in {@code cds/lib/}, and {@code cds/dht.jsa}, the classes a training run
 * ({@link TrainingRun}) loaded. A node started with {@link #javaArguments()} maps those classes parsed and verified
 * instead of loading them from nested jars: in a paired start-up benchmark on JDK 17 about half the CPU to ready
 * (docs/performance.md, "Start-up and warm-up"). It shortens the start only; it keeps no compiled code or profiles.
 *
 * <p>The layout is used only when it is complete and at least as new as the executable jar, so a jar rebuilt without
 * it ({@code -Dexec.skip}) never runs older extracted code. An archive made by another JDK is ignored by the JVM
 * (class data sharing is on in its default {@code auto} mode), which then loads every class itself.
 *
 * @param extractedJar the extracted jar ({@code cds/dht.jar}); its manifest puts {@code cds/lib/*.jar} on the class path
 * @param archive the dynamic CDS archive made for exactly those jars ({@code cds/dht.jsa})
 */
public record ClassDataArchive(Path extractedJar, Path archive) {
    /** The directory beside the executable jar that holds the layout. */
    public static final String DIRECTORY = "cds";
    /** The archive's file name in {@link #DIRECTORY}. */
    public static final String ARCHIVE = "dht.jsa";

    /**
     * The layout beside {@code executableJar}, if it is there, complete and not older than the jar. Reads file
     * attributes only (blocking file-system calls: for launchers, not event loops).
     */
    public static Optional<ClassDataArchive> beside(Path executableJar) {
        Path directory = executableJar.toAbsolutePath().resolveSibling(DIRECTORY);
        Path extracted = directory.resolve(executableJar.getFileName());
        Path archive = directory.resolve(ARCHIVE);
        try {
            if (!Files.isRegularFile(extracted) || !Files.isRegularFile(archive) || Files.size(archive) == 0) {
                return Optional.empty();
            }
            FileTime jarTime = Files.getLastModifiedTime(executableJar);
            if (Files.getLastModifiedTime(extracted).compareTo(jarTime) < 0
                    || Files.getLastModifiedTime(archive).compareTo(jarTime) < 0) {
                return Optional.empty();
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.of(new ClassDataArchive(extracted, archive));
    }

    /** The JVM arguments that start the node from this layout: the archive, then {@code -jar} and the extracted jar. */
    public List<String> javaArguments() {
        return List.of("-XX:SharedArchiveFile=" + archive, "-jar", extractedJar.toString());
    }
}
