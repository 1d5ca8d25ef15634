package dev.drain.support;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The JVM's own view of its threads: a JSON thread dump ({@code HotSpotDiagnosticMXBean.dumpThreads}),
 * which, unlike {@code Thread.getAllStackTraces()}, lists virtual threads too. Leak checks use it to
 * cross-check a pool's own count of its threads.
 */
public final class ThreadDump {
    private ThreadDump() {}

    /** {@return the names of every thread in a fresh dump whose name starts with {@code prefix}} */
    public static List<String> threadsNamed(String prefix) {
        try {
            Path file = Files.createTempFile("drain-threads", ".json");
            Files.delete(file); // dumpThreads refuses to overwrite
            try {
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
                List<String> names = new ArrayList<>();
                collectNames(JsonReader.parse(Files.readString(file)), prefix, names);
                return names;
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Walks the dump: every object with a string "name" inside a "threads" array is a thread. */
    private static void collectNames(@Nullable Object node, String prefix, List<String> names) {
        if (node instanceof Map<?, ?> map) {
            if (map.get("threads") instanceof List<?> threads) {
                for (Object thread : threads) {
                    if (thread instanceof Map<?, ?> t && t.get("name") instanceof String name && name.startsWith(prefix)) {
                        names.add(name);
                    }
                }
            }
            for (Object value : map.values()) {
                collectNames(value, prefix, names);
            }
        } else if (node instanceof List<?> list) {
            for (Object value : list) {
                collectNames(value, prefix, names);
            }
        }
    }
}
