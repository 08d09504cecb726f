package dev.dht;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which class data sharing layout a launcher uses: only one that is complete and not older than the jar. */
class ClassDataArchiveTest {
    @TempDir
    Path target;

    @Test
    void aCompleteLayoutAsNewAsTheJarIsUsedWithItsArchive() throws Exception {
        Path jar = layout(Instant.parse("2026-11-29T10:00:00Z"), Instant.parse("2026-11-29T10:00:00Z"), true);

        ClassDataArchive archive = ClassDataArchive.beside(jar).orElseThrow();

        assertThat(archive.javaArguments()).containsExactly(
                "-XX:SharedArchiveFile=" + target.resolve("cds/dht.jsa"), "-jar", target.resolve("cds/dht.jar").toString());
    }

    @Test
    void aLayoutOlderThanTheJarIsNotUsedSoNoOlderCodeRuns() throws Exception {
        Path jar = layout(Instant.parse("2026-11-29T10:00:00Z"), Instant.parse("2026-11-29T09:00:00Z"), true);

        assertThat(ClassDataArchive.beside(jar)).isEmpty();
    }

    @Test
    void aLayoutWithoutItsArchiveIsNotUsed() throws Exception {
        Path jar = layout(Instant.parse("2026-11-29T10:00:00Z"), Instant.parse("2026-11-29T10:00:00Z"), false);

        assertThat(ClassDataArchive.beside(jar)).isEmpty();
    }

    @Test
    void noLayoutAtAll() throws Exception {
        Path jar = Files.writeString(target.resolve("dht.jar"), "jar");

        assertThat(ClassDataArchive.beside(jar)).isEmpty();
    }

    /** target/dht.jar modified at {@code jarTime}, and target/cds/ with its files modified at {@code layoutTime}. */
    private Path layout(Instant jarTime, Instant layoutTime, boolean withArchive) throws Exception {
        Path jar = Files.writeString(target.resolve("dht.jar"), "jar");
        Files.setLastModifiedTime(jar, FileTime.from(jarTime));
        Path cds = Files.createDirectories(target.resolve("cds"));
        Files.setLastModifiedTime(Files.writeString(cds.resolve("dht.jar"), "extracted"), FileTime.from(layoutTime));
        if (withArchive) {
            Files.setLastModifiedTime(Files.writeString(cds.resolve("dht.jsa"), "archive"), FileTime.from(layoutTime));
        }
        return jar;
    }
}
