package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.lab.LocalKafka;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * KC-8, KC-10: child JVMs running a pool over a Kafka source ({@link WitnessedConsumer}), killed
 * with SIGKILL, stopped with SIGTERM, frozen with SIGSTOP, and joined by others in their group,
 * while this JVM watches the group's commits. The witnesses are outside the adapter: the
 * handler's line per record handled, forced to disk before it returns, and Kafka's interceptor
 * hook's line per commit ({@link CommitWitness}). {@code -Dkc.kills=N} sets how many kills (the
 * heavy profile asks 100), {@code -Dkc.seed} the seed.
 */
@ExtendWith(Broker.Extension.class)
class KafkaCrashTest {
    static final long SEED = Long.getLong("kc.seed", 20261204L);
    static final int KILLS = Integer.getInteger("kc.kills", 2);
    static final int PARTITIONS = 3;
    static final int PER_PARTITION = 100;
    static final int WORKERS = 4;
    static final int BUFFER = 16;

    /** One record a process handled. */
    record Handled(int partition, long offset, String who) {}

    /** What one kill showed, for the notes. */
    record Kill(int handledAtKill, int committedAtKill, int handledTwice, long recoveryMillis) {}

    /** KC-10: after a kill -9 at a random moment and a takeover, every record was handled, nothing committed was unfinished, and the records handled twice were polled by the killed process and not committed. */
    @Test
    void aKilledProcessLosesNothingAndCommitsNothingItDidNotFinish(Broker broker) throws Exception {
        Random random = new Random(SEED);
        List<Kill> kills = new ArrayList<>();
        for (int k = 0; k < KILLS; k++) {
            kills.add(killAndTakeOver(broker, 1 + random.nextInt(PARTITIONS * PER_PARTITION * 2 / 3)));
        }
        assertThat(kills).hasSize(KILLS);
        writeFigures(kills);
    }

    private Kill killAndTakeOver(Broker broker, int killAfter) throws Exception {
        String topic = broker.freshTopic("killed", PARTITIONS);
        String group = Broker.freshGroup("killed");
        broker.produce(topic, PARTITIONS, PER_PARTITION);
        Witness child = new Witness("child");
        Witness parent = new Witness("parent");
        try {
            Process process = child.start(broker, topic, group, 5);
            try {
                Waits.untilLookingEvery(LOOK, killAfter + " records handled, or the child gone", () -> !process.isAlive() || child.handled().size() >= killAfter);
                assertThat(process.isAlive()).as("the child, before its kill (its output: %s)", child.output()).isTrue();
            } finally {
                process.destroyForcibly(); // SIGKILL: no shutdown hook, no finally, no close
                assertThat(process.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the child killed").isTrue();
            }
            assertThat(process.exitValue()).as("the child's exit status").isEqualTo(137);
            long killedAt = System.nanoTime();
            Map<TopicPartition, NavigableSet<Long>> handledByChild = offsets(topic, child.handled());
            Map<TopicPartition, NavigableSet<Long>> committedAtKill = Recorded.committedDone(broker, group, topic);
            assertCommitsFinished(child, handledByChild, topic);

            List<String> ends = parent.takeOver(broker, topic, group, PARTITIONS, PER_PARTITION);
            long recoveryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            assertThat(ends).as("the takeover's runs").allSatisfy(end -> assertThat(end).contains("outcome=Completed"));

            Map<TopicPartition, NavigableSet<Long>> handledByParent = offsets(topic, parent.handled());
            Map<TopicPartition, NavigableSet<Long>> all = Recorded.all(topic, PARTITIONS, PER_PARTITION);
            Map<TopicPartition, NavigableSet<Long>> handled = union(handledByChild, handledByParent);
            assertThat(Recorded.minus(all, handled)).as("records never handled (lost)").isEmpty();
            Map<TopicPartition, NavigableSet<Long>> twice = intersection(handledByChild, handledByParent);
            assertThat(intersection(twice, committedAtKill)).as("records handled again though committed done").isEmpty();
            assertThat(Recorded.nonEmpty(Recorded.committedDone(broker, group, topic))).as("committed at the end").isEqualTo(all);
            // handled by the child and not committed: in its workers, or settled and not yet
            // committed (the pool's backlog of four batches of 16, and the batch being committed)
            assertThat(size(twice)).as("handled twice: at most what the child had handled and not committed")
                    .isLessThanOrEqualTo(2 * WORKERS + 5 * 16);
            return new Kill(size(handledByChild), size(committedAtKill), size(twice), recoveryMillis);
        } finally {
            child.delete();
            parent.delete();
        }
    }

    /** KC-10: every commit the child made recorded only records the child had handled to their end. */
    static void assertCommitsFinished(Witness child, Map<TopicPartition, NavigableSet<Long>> handledByChild, String topic) {
        for (String line : child.lines(child.commits)) {
            String[] parts = line.split(" ", -1);
            TopicPartition partition = new TopicPartition(topic, Integer.parseInt(parts[0]));
            NavigableSet<Long> done = Recorded.committedDone(new OffsetAndMetadata(Long.parseLong(parts[1]), parts[2].equals("-") ? "" : parts[2]));
            assertThat(handledByChild.getOrDefault(partition, new TreeSet<>())).as("handled before the commit %s", line).containsAll(done);
        }
    }

    /** The kills' figures, for the notes: target/kafka-kills.md. */
    private static void writeFigures(List<Kill> kills) throws IOException {
        StringBuilder md = new StringBuilder("""
                | kill | handled at the kill | committed done at the kill | handled twice | kill to all done (ms) |
                | --- | --- | --- | --- | --- |
                """);
        for (int i = 0; i < kills.size(); i++) {
            Kill k = kills.get(i);
            md.append(String.format(Locale.ROOT, "| %d | %d | %d | %d | %d |%n", i + 1, k.handledAtKill(), k.committedAtKill(),
                    k.handledTwice(), k.recoveryMillis()));
        }
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "kafka-kills.md"), "KafkaCrashTest, " + kills.size() + " kills, " + PARTITIONS
                + " partitions of " + PER_PARTITION + " records, " + WORKERS + " workers, buffer " + BUFFER + ", session timeout "
                + LocalKafka.SESSION_TIMEOUT_MS + " ms, seed " + SEED + "\n\n" + md);
    }

    /**
     * KC-8, KC-10: three processes share a group and a topic, joining one after another; one
     * leaves gracefully (SIGTERM) and one is killed: every record handled, every commit of
     * handled records only, no partition's commit ever moves back, and each graceful process
     * ends its run completed.
     */
    @Test
    void processesJoiningLeavingAndDyingLoseNothing(Broker broker) throws Exception {
        String topic = broker.freshTopic("shared", 6);
        String group = Broker.freshGroup("shared");
        int perPartition = 400;
        long waitsForSessions = 2L * LocalKafka.SESSION_TIMEOUT_MS;
        broker.produce(topic, 6, perPartition);
        List<Witness> witnesses = List.of(new Witness("a"), new Witness("b"), new Witness("c"));
        CommitWatch watch = new CommitWatch(broker, group, topic);
        List<Process> processes = new ArrayList<>();
        try {
            watch.start();
            processes.add(witnesses.get(0).start(broker, topic, group, 25, waitsForSessions));
            Waits.untilLookingEvery(LOOK, "a has handled some", () -> total(witnesses) >= 100);
            processes.add(witnesses.get(1).start(broker, topic, group, 25));
            Waits.untilLookingEvery(LOOK, "b handles", () -> !witnesses.get(1).handled().isEmpty());
            processes.add(witnesses.get(2).start(broker, topic, group, 25));
            Waits.untilLookingEvery(LOOK, "c handles", () -> !witnesses.get(2).handled().isEmpty());
            processes.get(1).destroy(); // SIGTERM: b stops gracefully and leaves
            assertThat(processes.get(1).waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("b ended").isTrue();
            processes.get(2).destroyForcibly(); // c dies
            assertThat(processes.get(2).waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("c killed").isTrue();
            assertThat(processes.get(0).waitFor(Bounds.WAIT.toNanos() * 3, TimeUnit.NANOSECONDS)).as("a ended").isTrue();
            assertThat(witnesses.get(0).output()).as("a's end").contains("outcome=Completed");
            assertThat(witnesses.get(1).output()).as("b's end (a graceful stop)").contains("outcome=Completed");
        } finally {
            for (Process p : processes) {
                p.destroyForcibly();
                p.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
            }
            watch.stop();
        }
        Witness last = new Witness("last");
        try {
            // a's idle end may come before c's partitions are free (c's session has to expire): a
            // last member takes over what is left
            assertThat(last.takeOver(broker, topic, group, 6, perPartition)).as("the last member's runs")
                    .allSatisfy(end -> assertThat(end).contains("outcome=Completed"));
            Map<TopicPartition, NavigableSet<Long>> all = Recorded.all(topic, 6, perPartition);
            Map<TopicPartition, NavigableSet<Long>> handled = offsets(topic, last.handled());
            for (Witness w : witnesses) {
                handled = union(handled, offsets(topic, w.handled()));
            }
            for (Witness w : witnesses) {
                assertCommitsFinished(w, handled, topic);
            }
            assertThat(watch.wentBack()).as("commits that moved back").isEmpty();
            assertThat(Recorded.minus(all, handled)).as("records never handled (lost)").isEmpty();
            assertThat(Recorded.nonEmpty(Recorded.committedDone(broker, group, topic))).as("committed at the end").isEqualTo(all);
        } finally {
            last.delete();
            for (Witness w : witnesses) {
                w.delete();
            }
        }
    }

    /**
     * KC-8: a process frozen (SIGSTOP) past its session loses its partitions to another member;
     * thawed, it commits nothing of them: its settlements are refused or stale, and counted, and
     * no partition's commit moves back.
     */
    @Test
    void aFrozenProcessCommitsNothingOfThePartitionsItLost(Broker broker) throws Exception {
        String topic = broker.freshTopic("frozen", 2);
        String group = Broker.freshGroup("frozen");
        broker.produce(topic, 2, 1_000); // more than either can handle before the freeze: each holds a partition with work left
        Witness frozen = new Witness("frozen");
        Witness other = new Witness("other");
        CommitWatch watch = new CommitWatch(broker, group, topic);
        Process f = null;
        Process o = null;
        try {
            watch.start();
            // the frozen-to-be is slow (50 ms a record): when the other joins, both its partitions still have most of
            // their records, and the one it keeps has plenty left when it is frozen
            f = frozen.start(broker, topic, group, 50, 2L * LocalKafka.SESSION_TIMEOUT_MS);
            Waits.untilLookingEvery(LOOK, "the frozen-to-be handles", () -> frozen.handled().size() >= 20);
            o = other.start(broker, topic, group, 10, 2L * LocalKafka.SESSION_TIMEOUT_MS);
            Waits.untilLookingEvery(LOOK, "the other handles", () -> !other.handled().isEmpty());
            signal(f, "STOP");
            int atFreeze = frozen.handled().size();
            try {
                Waits.untilLookingEvery(LOOK, "the other has taken over the frozen one's partition", () -> offsets(topic, other.handled()).size() == 2);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; frozen at " + System.currentTimeMillis() + ": " + frozen.output()
                        + "; other: " + other.output() + "; handled by the other: " + offsets(topic, other.handled()).keySet(), e);
            }
            signal(f, "CONT");
            assertThat(f.waitFor(Bounds.WAIT.toNanos() * 3, TimeUnit.NANOSECONDS)).as("the thawed one ended").isTrue();
            assertThat(o.waitFor(Bounds.WAIT.toNanos() * 3, TimeUnit.NANOSECONDS)).as("the other ended").isTrue();
            String thawed = frozen.output();
            assertThat(thawed).as("the thawed one's end").contains("ended ");
            assertThat(counter(thawed, "refused") + counter(thawed, "stale")).as("what the thawed one reported (%s)", thawed)
                    .isPositive();
            assertThat(atFreeze).isPositive();
            assertThat(watch.wentBack()).as("commits that moved back").isEmpty();
            Map<TopicPartition, NavigableSet<Long>> handled = union(offsets(topic, frozen.handled()), offsets(topic, other.handled()));
            assertCommitsFinished(frozen, handled, topic);
            assertCommitsFinished(other, handled, topic);
        } finally {
            for (Process p : new Process[] {f, o}) {
                if (p != null) {
                    signal(p, "CONT");
                    p.destroyForcibly();
                    p.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                }
            }
            watch.stop();
            frozen.delete();
            other.delete();
        }
    }

    /** How often a wait here looks: the conditions read the children's witness files; a tight loop would take the CPU the children need. */
    private static final java.time.Duration LOOK = java.time.Duration.ofMillis(20);

    private static long counter(String ended, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(name + "=(\\d+)").matcher(ended);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static void signal(Process process, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
        kill.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
    }

    // ---- witnesses -------------------------------------------------------------------------------

    /** One process's witness files and output. */
    static final class Witness {
        final String who;
        final Path handlings;
        final Path commits;
        final Path out;

        Witness(String who) {
            this.who = who;
            try {
                this.handlings = Files.createTempFile("drain-kafka-" + who, ".handled");
                this.commits = Files.createTempFile("drain-kafka-" + who, ".commits");
                this.out = Files.createTempFile("drain-kafka-" + who, ".out");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        String[] args(Broker broker, String topic, String group, long handlerMillis, long idleMillis) {
            return new String[] {broker.servers(), topic, group, Integer.toString(WORKERS), Integer.toString(BUFFER),
                    Long.toString(handlerMillis), handlings.toString(), commits.toString(), who, Long.toString(idleMillis)};
        }

        /** Starts a child that ends after 1.5 s with nothing to poll. */
        Process start(Broker broker, String topic, String group, long handlerMillis) throws IOException {
            return start(broker, topic, group, handlerMillis, 1_500);
        }

        /**
         * Starts a child that ends after {@code idleMillis} with nothing to poll: longer than a
         * session timeout, for a member that must wait for a dead or frozen one's partitions.
         */
        Process start(Broker broker, String topic, String group, long handlerMillis, long idleMillis) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> command = new ArrayList<>(List.of(java, "--enable-preview", "--sun-misc-unsafe-memory-access=allow", "-cp",
                    classPath, WitnessedConsumer.class.getName()));
            command.addAll(List.of(args(broker, topic, group, handlerMillis, idleMillis)));
            return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        }

        /** Runs the same consumer in this JVM, to its idle end; {@return its end line} */
        String runHere(Broker broker, String topic, String group) throws Exception {
            AtomicReference<WorkerPool<Delivery<String, String>, String>> running = new AtomicReference<>();
            return WitnessedConsumer.run(args(broker, topic, group, 0, 1_500), running, null);
        }

        /**
         * Takes over in this JVM until the group has committed every record of {@code topic}:
         * runs that end when idle, again and again (a dead member's partitions come back only once
         * its session has expired); {@return the end line of each run}
         */
        List<String> takeOver(Broker broker, String topic, String group, int partitions, int perPartition) {
            Map<TopicPartition, NavigableSet<Long>> all = Recorded.all(topic, partitions, perPartition);
            List<String> ends = new ArrayList<>();
            Waits.untilLookingEvery(LOOK, "every record committed", () -> {
                try {
                    ends.add(runHere(broker, topic, group));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return Recorded.nonEmpty(Recorded.committedDone(broker, group, topic)).equals(all);
            });
            return ends;
        }

        /** {@return the complete lines of {@code file}: a line the kill cut short is not one} */
        List<String> lines(Path file) {
            try {
                String text = Files.readString(file);
                int end = text.lastIndexOf('\n');
                return end < 0 ? List.of() : text.substring(0, end).lines().toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        List<Handled> handled() {
            List<Handled> all = new ArrayList<>();
            for (String line : lines(handlings)) {
                String[] parts = line.split(" ", -1);
                all.add(new Handled(Integer.parseInt(parts[0]), Long.parseLong(parts[1]), parts[2]));
            }
            return all;
        }

        String output() {
            try {
                return Files.readString(out);
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }

        void delete() throws IOException {
            Files.deleteIfExists(handlings);
            Files.deleteIfExists(commits);
            Files.deleteIfExists(out);
        }
    }

    /** Samples a group's committed offsets while processes come and go, and keeps every move back. */
    static final class CommitWatch {
        private final Broker broker;
        private final String group;
        private final String topic;
        private final Map<TopicPartition, Long> highest = new HashMap<>();
        private final List<String> back = new ArrayList<>();
        private volatile boolean stopped;
        private Thread thread = new Thread(() -> {});

        CommitWatch(Broker broker, String group, String topic) {
            this.broker = broker;
            this.group = group;
            this.topic = topic;
        }

        void start() {
            thread = Thread.ofPlatform().daemon().name("commit-watch").start(() -> {
                while (!stopped) {
                    sample();
                    try {
                        Thread.sleep(100); // a sampling period, not a synchronization: every sample is checked
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        private synchronized void sample() {
            broker.committed(group, topic).forEach((partition, committed) -> {
                Long before = highest.get(partition);
                if (before != null && committed.offset() < before) {
                    back.add(partition + ": " + before + " -> " + committed.offset());
                }
                highest.merge(partition, committed.offset(), Math::max);
            });
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(Bounds.WAIT.toMillis());
            sample();
        }

        synchronized List<String> wentBack() {
            return List.copyOf(back);
        }
    }

    // ---- offsets ---------------------------------------------------------------------------------

    static Map<TopicPartition, NavigableSet<Long>> offsets(String topic, List<Handled> handled) {
        Map<TopicPartition, NavigableSet<Long>> offsets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (Handled h : handled) {
            offsets.computeIfAbsent(new TopicPartition(topic, h.partition()), p -> new TreeSet<>()).add(h.offset());
        }
        return offsets;
    }

    static Map<TopicPartition, NavigableSet<Long>> union(Map<TopicPartition, NavigableSet<Long>> a,
            Map<TopicPartition, NavigableSet<Long>> b) {
        Map<TopicPartition, NavigableSet<Long>> all = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        a.forEach((p, s) -> all.computeIfAbsent(p, x -> new TreeSet<>()).addAll(s));
        b.forEach((p, s) -> all.computeIfAbsent(p, x -> new TreeSet<>()).addAll(s));
        return all;
    }

    static Map<TopicPartition, NavigableSet<Long>> intersection(Map<TopicPartition, NavigableSet<Long>> a,
            Map<TopicPartition, NavigableSet<Long>> b) {
        Map<TopicPartition, NavigableSet<Long>> both = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        a.forEach((p, s) -> {
            NavigableSet<Long> common = new TreeSet<>(s);
            common.retainAll(b.getOrDefault(p, new TreeSet<>()));
            if (!common.isEmpty()) {
                both.put(p, common);
            }
        });
        return both;
    }

    static int size(Map<TopicPartition, NavigableSet<Long>> offsets) {
        return offsets.values().stream().mapToInt(NavigableSet::size).sum();
    }

    private static int total(List<Witness> witnesses) {
        return witnesses.stream().mapToInt(w -> w.handled().size()).sum();
    }
}
