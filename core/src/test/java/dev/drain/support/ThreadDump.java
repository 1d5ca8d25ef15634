package dev.drain.support;

import dev.drain.measure.JvmThreads;
import java.util.List;

/**
 * The JVM's own view of its threads, for leak checks: a JSON thread dump
 * ({@link JvmThreads}), which, unlike {@code Thread.getAllStackTraces()}, lists virtual threads too.
 */
public final class ThreadDump {
    private ThreadDump() {}

    /**
     * {@return whether a thread whose name starts with {@code prefix} is, in a fresh dump, inside a
     * frame that contains {@code frame} (such as {@code "ShutdownQueue.put("})}
     */
    public static boolean someThreadIn(String prefix, String frame) {
        return JvmThreads.dump().threadsNamed(prefix).stream().anyMatch(t -> t.isIn(frame));
    }

    /** {@return the names of every thread in a fresh dump whose name starts with {@code prefix}} */
    public static List<String> threadsNamed(String prefix) {
        return JvmThreads.dump().threadsNamed(prefix).stream().map(JvmThreads.DumpedThread::name).toList();
    }
}
