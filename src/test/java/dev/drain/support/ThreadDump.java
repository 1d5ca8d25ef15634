package dev.drain.support;

import dev.drain.report.JvmThreads;
import java.util.List;

/**
 * The JVM's own view of its threads, for leak checks: a JSON thread dump
 * ({@link JvmThreads}), which, unlike {@code Thread.getAllStackTraces()}, lists virtual threads too.
 */
public final class ThreadDump {
    private ThreadDump() {}

    /** {@return the names of every thread in a fresh dump whose name starts with {@code prefix}} */
    public static List<String> threadsNamed(String prefix) {
        return JvmThreads.dump().threadsNamed(prefix).stream().map(JvmThreads.DumpedThread::name).toList();
    }
}
