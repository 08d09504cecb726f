package dev.dht.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.AliasFor;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ContextCustomizerFactories;

/**
 * A test of one node over HTTP: the application on a random port ({@code @LocalServerPort}), with a data dir of
 * its own that is deleted with the context and the fixed self URL of {@link SingleNodeSettings#SELF}, in a context
 * of the test class's own (dirtied after it). {@link #properties} holds the test's own settings.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
@ContextCustomizerFactories(SingleNodeDataDir.class)
public @interface SingleNodeTest {
    /** Settings of this test in {@code key=value} form, as {@link SpringBootTest#properties()}. */
    @AliasFor(annotation = SpringBootTest.class, attribute = "properties")
    String[] properties() default {};
}
