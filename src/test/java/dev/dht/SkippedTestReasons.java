package dev.dht;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Prints one line to the build's output for every test or test class that did not run, with the reason that
 * JUnit otherwise keeps in the XML reports only: "SKIPPED ClusterContainersIT: no container engine found ...".
 * Registered through {@code META-INF/services}.
 */
public final class SkippedTestReasons implements TestExecutionListener {

    @Override
    public void executionSkipped(TestIdentifier test, String reason) {
        print(test, reason);
    }

    @Override
    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            print(test, result.getThrowable().map(Throwable::getMessage).orElse("aborted"));
        }
    }

    private static void print(TestIdentifier test, String reason) {
        String name = test.getSource().map(source -> source instanceof MethodSource method
                        ? simpleName(method.getClassName()) + "." + method.getMethodName()
                        : source instanceof ClassSource type ? simpleName(type.getClassName()) : test.getDisplayName())
                .orElse(test.getDisplayName());
        System.out.println("SKIPPED " + name + ": " + reason);
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }
}
