package dev.dht.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ContextCustomizerFactories;

/**
 * A test of one node with default settings over HTTP, like {@link SingleNodeTest}, but on a node shared by every
 * test class so annotated in the JVM (Spring's context cache keeps it; it closes when the test JVM ends), which
 * saves a node's start-up per class. A class on it uses keys of its own, asserts nothing about keys or counts
 * other classes may add (ranges only over its own prefixes, no metric totals), and leaves the node as it found it;
 * a class that needs settings of its own or changes the node (closes its store, fills its disk) uses
 * {@link SingleNodeTest}. Not inherited: a subclass with other settings declares {@link SingleNodeTest} itself.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ContextCustomizerFactories(SingleNodeDataDir.class)
public @interface SharedNodeTest {
}
