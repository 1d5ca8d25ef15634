package dev.drain.measure;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Every live thread of this JVM, virtual threads included, with the tree of thread containers
 * they run in: a JSON thread dump ({@code HotSpotDiagnosticMXBean.dumpThreads}), the same data
 * as {@code jcmd <pid> Thread.dump_to_file -format=json}. Unlike
 * {@code Thread.getAllStackTraces()}, it lists virtual threads, and it shows each
 * {@code StructuredTaskScope} as a container with its owner and its parent.
 *
 * <p>This is drain's {@code asyncio.all_tasks()}: the leak checks take {@link Snapshot#tasks()}
 * before and after a run and count the threads alive after it that were not alive before
 * ({@link Snapshot#tasksNotIn}), and never rely on the pool's own count. {@code all_tasks()} counts every
 * task of the loop but not the loop; {@code tasks()} counts every thread of the JVM but the
 * carriers of the virtual-thread scheduler (the JDK's loop, whose number follows the load) and
 * the thread that took the dump. The JDK starts some threads of its own lazily, the first time a
 * virtual thread does socket I/O, for example; {@link #warmUp()} starts them, so that a count
 * taken after it moves only when someone starts or ends a thread.
 */
public final class JvmThreads {
    private JvmThreads() {}

    /**
     * One thread of the dump.
     *
     * @param tid its thread id
     * @param name its name (empty for an unnamed virtual thread)
     * @param virtual whether it is a virtual thread
     * @param carrier for a virtual thread mounted when the dump was taken, the id of the platform
     *     thread it ran on; otherwise -1
     * @param stack its frames, innermost first, as the dump writes them (for example
     *     {@code "java.base/java.util.concurrent.locks.LockSupport.park(LockSupport.java:369)"})
     */
    public record DumpedThread(long tid, String name, boolean virtual, long carrier, List<String> stack) {
        /** Copies the list. */
        public DumpedThread {
            stack = List.copyOf(stack);
        }

        /**
         * {@return whether a frame of its stack contains {@code text}}
         *
         * @param text a piece of a frame, such as {@code "ShutdownQueue.put("}
         */
        public boolean isIn(String text) {
            return stack.stream().anyMatch(frame -> frame.contains(text));
        }
    }

    /**
     * One thread container: the root, an executor, or a scope.
     *
     * @param name the container's name ({@code <root>}, or a scope's name), without its identity suffix
     * @param id the container's full identity in the dump
     * @param parent the full identity of its parent, or {@code null} for the root
     * @param owner the thread id of its owner (a scope's), or -1
     * @param threads the threads it holds
     */
    public record Container(String name, String id, @Nullable String parent, long owner, List<DumpedThread> threads) {
        /** Copies the list. */
        public Container {
            threads = List.copyOf(threads);
        }
    }

    /**
     * A dump: every container, in the dump's order (parents before children).
     *
     * @param containers the containers
     */
    public record Snapshot(List<Container> containers) {
        /** Copies the list. */
        public Snapshot {
            containers = List.copyOf(containers);
        }

        /**
         * {@return the threads the leak checks count: every thread of the JVM, virtual ones
         * included, but the virtual-thread scheduler's carriers and the thread that took the dump}
         */
        public List<DumpedThread> tasks() {
            List<DumpedThread> all = threads();
            Set<Long> carriers = new HashSet<>();
            all.stream().filter(t -> t.carrier() >= 0).forEach(t -> carriers.add(t.carrier()));
            Set<String> carrierPools = new HashSet<>();
            containers.stream().filter(c -> c.threads().stream().anyMatch(t -> carriers.contains(t.tid())))
                    .forEach(c -> carrierPools.add(c.id()));
            return containers.stream().filter(c -> !carrierPools.contains(c.id()))
                    .flatMap(c -> c.threads().stream()).filter(t -> !t.name().equals(DUMPER)).toList();
        }

        /**
         * {@return the {@link #tasks()} of this dump that {@code earlier} did not hold, by thread
         * id: the threads started since and still alive} A JVM never reuses a thread id. A thread
         * that was alive in {@code earlier} and has ended since (a test framework's, another
         * test's, one the JDK retires) is not counted, so, unlike a difference of counts, an end
         * elsewhere cannot cancel a leak out or make the measure negative.
         *
         * @param earlier a dump taken before this one
         */
        public List<DumpedThread> tasksNotIn(Snapshot earlier) {
            Set<Long> alive = new HashSet<>();
            earlier.tasks().forEach(t -> alive.add(t.tid()));
            return tasks().stream().filter(t -> !alive.contains(t.tid())).toList();
        }

        /** {@return every thread of the JVM in this dump} */
        public List<DumpedThread> threads() {
            return containers.stream().flatMap(c -> c.threads().stream()).toList();
        }

        /**
         * {@return the threads whose name starts with {@code prefix}}
         *
         * @param prefix the start of the names
         */
        public List<DumpedThread> threadsNamed(String prefix) {
            return threads().stream().filter(t -> t.name().startsWith(prefix)).toList();
        }

        /**
         * {@return the scopes named {@code name}, and every container inside them, as indented
         * lines: each container's name, its owner, and its threads in the order they were created},
         * for example
         * <pre>
         *   tour (owned by main): tour-watchdog-1, tour-driver-2
         *     tour-workers (owned by tour-driver-2): tour-worker-4
         *       tour-attempt (owned by tour-worker-4): tour-attempt-5
         * </pre>
         *
         * @param name the scope's name (a pool's name, for a pool's run)
         */
        public List<String> tree(String name) {
            List<String> lines = new ArrayList<>();
            containers.stream().filter(c -> c.name().equals(name)).forEach(root -> render(root, 0, lines));
            return lines;
        }

        private void render(Container container, int depth, List<String> lines) {
            String owner = container.owner() < 0 ? "" : " (owned by " + threadName(container.owner()) + ")";
            lines.add("  ".repeat(depth) + container.name() + owner + ": "
                    + String.join(", ", container.threads().stream()
                            .sorted(Comparator.comparingLong(DumpedThread::tid)).map(DumpedThread::name).toList()));
            containers.stream().filter(c -> container.id().equals(c.parent()))
                    .forEach(child -> render(child, depth + 1, lines));
        }

        private String threadName(long tid) {
            return threads().stream().filter(t -> t.tid() == tid).map(DumpedThread::name).findFirst()
                    .orElse("#" + tid);
        }

        /**
         * {@return the container with the full identity {@code id}}
         *
         * @param id the identity, as a container's {@code parent} names it
         */
        public Optional<Container> byId(String id) {
            return containers.stream().filter(c -> c.id().equals(id)).findFirst();
        }

        /**
         * {@return the containers from the one holding the first thread named {@code prefix…} up to
         * the root, innermost first; empty if there is no such thread}
         *
         * @param threadPrefix the start of the thread's name
         */
        public List<Container> chainOf(String threadPrefix) {
            List<Container> chain = new ArrayList<>();
            Optional<Container> next = containers.stream()
                    .filter(c -> c.threads().stream().anyMatch(t -> t.name().startsWith(threadPrefix))).findFirst();
            while (next.isPresent()) {
                Container container = next.get();
                chain.add(container);
                next = container.parent() == null ? Optional.empty() : byId(container.parent());
            }
            return chain;
        }
    }

    /** The name of the virtual thread that takes each dump. */
    private static final String DUMPER = "drain-thread-dump";

    /**
     * {@return a fresh dump of every thread of this JVM} It is taken on a virtual thread of its
     * own, mounted while it dumps, which shows which threads are the scheduler's carriers; the
     * caller's interrupt status is kept, and does not cut the dump short.
     */
    public static Snapshot dump() {
        AtomicReference<@Nullable Snapshot> taken = new AtomicReference<>();
        AtomicReference<@Nullable RuntimeException> failed = new AtomicReference<>();
        Thread dumper = Thread.ofVirtual().name(DUMPER).start(() -> {
            try {
                taken.set(dumpHere());
            } catch (RuntimeException e) {
                failed.set(e);
            }
        });
        boolean interrupted = false;
        while (dumper.isAlive()) {
            try {
                dumper.join();
            } catch (InterruptedException e) {
                interrupted = true; // a dump takes milliseconds: finish it, then keep the interrupt
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        RuntimeException failure = failed.get();
        if (failure != null) {
            throw failure;
        }
        return Objects.requireNonNull(taken.get(), "the dumping thread ended without a dump");
    }

    private static Snapshot dumpHere() {
        try {
            Path file = Files.createTempFile("drain-threads", ".json");
            Files.delete(file); // dumpThreads refuses to overwrite
            try {
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
                return parse(Files.readString(file));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether {@link #warmUp()} has run; written once. */
    private static volatile boolean warm;

    /**
     * Starts the threads the JDK starts lazily, once: a virtual thread that parks with a timeout
     * and does socket I/O on loopback (which starts the I/O pollers for virtual threads). After
     * it, a count of {@link Snapshot#tasks()} changes only when a thread starts or ends.
     */
    public static synchronized void warmUp() {
        if (warm) {
            return;
        }
        Thread warming = Thread.ofVirtual().name("drain-warm-up").start(() -> {
            try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                 Socket accepted = server.accept()) {
                client.getOutputStream().write(1);
                if (accepted.getInputStream().read() != 1) {
                    throw new IOException("the loopback round trip lost its byte");
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try {
            warming.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while warming up the JVM's threads", e);
        }
        warm = true;
    }

    /**
     * {@return the snapshot a JSON thread dump's text describes}
     *
     * @param json the text of a dump in JDK 25's JSON format
     */
    public static Snapshot parse(String json) {
        List<Container> containers = new ArrayList<>();
        Object dump = field(JsonReader.parse(json), "threadDump");
        if (field(dump, "threadContainers") instanceof List<?> list) {
            for (Object container : list) {
                String id = text(field(container, "container"));
                List<DumpedThread> threads = new ArrayList<>();
                if (field(container, "threads") instanceof List<?> dumped) {
                    for (Object thread : dumped) {
                        Object carrier = field(thread, "carrier");
                        List<String> stack = new ArrayList<>();
                        if (field(thread, "stack") instanceof List<?> frames) {
                            frames.forEach(frame -> stack.add(text(frame)));
                        }
                        threads.add(new DumpedThread(number(field(thread, "tid")), text(field(thread, "name")),
                                Boolean.TRUE.equals(field(thread, "virtual")), carrier == null ? -1 : number(carrier),
                                stack));
                    }
                }
                Object parent = field(container, "parent");
                Object owner = field(container, "owner");
                int slash = id.indexOf('/');
                containers.add(new Container(slash < 0 ? id : id.substring(0, slash), id,
                        parent == null ? null : text(parent), owner == null ? -1 : number(owner), threads));
            }
        }
        return new Snapshot(containers);
    }

    private static @Nullable Object field(@Nullable Object node, String name) {
        return node instanceof Map<?, ?> map ? map.get(name) : null;
    }

    private static String text(@Nullable Object value) {
        return value == null ? "" : value.toString();
    }

    private static long number(@Nullable Object value) {
        return switch (value) {
            case Number n -> n.longValue();
            case String s -> Long.parseLong(s);
            case null, default -> -1;
        };
    }
}
