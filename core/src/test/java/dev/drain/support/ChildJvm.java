package dev.drain.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of the test class path in a JVM of its own, the same JDK as the tests, for
 * the properties that only a whole process shows: that it exits, what it prints when it starts
 * without a flag. Its output goes to files, so a child that hangs cannot block the test; a child
 * still running after the bound is killed, and the test fails.
 */
public final class ChildJvm {
    private ChildJvm() {}

    /**
     * How a child ended.
     *
     * @param exited whether it exited by itself within the bound (if not, it was killed)
     * @param status its exit status, or -1 if it was killed
     * @param out what it printed on standard output
     * @param err what it printed on standard error
     */
    public record Ended(boolean exited, int status, String out, String err) {}

    /**
     * Starts {@code main} with {@code jvmFlags} and {@code args}, its output and errors to
     * {@code out} and {@code err}, and returns at once: the caller waits for it (bounded) and
     * destroys it if it must.
     */
    public static Process start(List<String> jvmFlags, Path out, Path err, Class<?> main, String... args) throws IOException {
        return new ProcessBuilder(command(jvmFlags, main, args)).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    }

    private static List<String> command(List<String> jvmFlags, Class<?> main, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvmFlags);
        command.addAll(List.of("-cp", classPath, main.getName()));
        command.addAll(List.of(args));
        return command;
    }

    /**
     * Waits for {@code child} to be ready ({@code untilReady}, a bounded wait that also returns if
     * the child has ended), sends it SIGTERM, as a deploy does, and waits at most {@code within}
     * for it to exit by itself; a child still running then (or after a failed wait) is killed.
     * {@return the time from the signal to the child's exit, in nanoseconds}
     *
     * @param err the child's standard error, for the message of a failure
     * @throws AssertionError if the child had ended before its signal, or did not exit by itself
     *     within {@code within}
     */
    public static long sigtermOnceReady(Process child, Runnable untilReady, Duration within, Path err) throws InterruptedException {
        try {
            untilReady.run();
            if (!child.isAlive()) {
                throw new AssertionError("the child ended before its SIGTERM, with status " + child.exitValue() + " (its errors: "
                        + output(err) + ")");
            }
            long sent = System.nanoTime();
            child.destroy(); // SIGTERM
            if (!child.waitFor(within.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("the child did not exit by itself within " + within + " of its SIGTERM");
            }
            return System.nanoTime() - sent;
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
            }
        }
    }

    /** {@return what a child wrote to {@code file}, or why it cannot be read} For a failing test's message. */
    public static String output(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** Runs {@code main} with {@code jvmFlags} and {@code args}, waiting at most {@link Bounds#WAIT}. */
    public static Ended run(List<String> jvmFlags, Class<?> main, String... args) {
        try {
            Path out = Files.createTempFile("drain-child", ".out");
            Path err = Files.createTempFile("drain-child", ".err");
            try {
                Process child = start(jvmFlags, out, err, main, args);
                boolean exited = child.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                if (!exited) {
                    child.destroyForcibly().waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                }
                return new Ended(exited, exited ? child.exitValue() : -1, Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a child JVM", e);
        }
    }
}
