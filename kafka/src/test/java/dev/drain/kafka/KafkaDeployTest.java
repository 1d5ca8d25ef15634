package dev.drain.kafka;

import static dev.drain.kafka.KafkaCrashTest.intersection;
import static dev.drain.kafka.KafkaCrashTest.offsets;
import static dev.drain.kafka.KafkaCrashTest.size;
import static dev.drain.kafka.KafkaCrashTest.union;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.ChildJvm;
import dev.drain.support.Waits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * KC-12: a child JVM serves a topic as a user's service does ({@link ServiceConsumer}: the
 * keep-going setting, a backoff, {@code StopOnShutdown}) and receives SIGTERM at a random moment
 * (once a random number of records has been witnessed); this JVM watches it exit, reads the
 * group's commit and the dead-letter topic, then finishes the topic as the group's next member.
 * The witnesses are outside the adapter: the handler's line per record done, forced to disk
 * before it returns, Kafka's interceptor hook's line per commit ({@link CommitWitness}), and the
 * dead-letter topic. {@code -Dkc.sigterms=N} sets how many SIGTERMs, {@code -Dkc.seed} the seed.
 */
@ExtendWith(Broker.Extension.class)
class KafkaDeployTest {
    static final long SEED = Long.getLong("kc.seed", 20261207L);
    static final int SIGTERMS = Integer.getInteger("kc.sigterms", 2);
    static final int PARTITIONS = 3;
    static final int PER_PARTITION = 300;
    static final Duration DEADLINE = Duration.ofSeconds(3);
    static final Duration GRACE = Duration.ofSeconds(1);
    /** What the JVM's own exit may add to the deadline and the grace: starting the hook, leaving the group, halting, a loaded machine. */
    static final Duration EXIT = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    /** What the group, the dead-letter topic and the witness said when the child had exited. */
    private record AtExit(long exitMillis, Map<TopicPartition, NavigableSet<Long>> handled,
            Map<TopicPartition, NavigableSet<Long>> committed, Map<TopicPartition, NavigableSet<Long>> deadLettered) {}

    /**
     * KC-12, WP-27, WP-23, WP-28: SIGTERM at random moments: each time the service exits by itself
     * within the deadline, its group's commit holds exactly what it handled and what it
     * dead-lettered, and the next member handles exactly the rest.
     */
    @Test
    void aSigtermAtAnyMomentCommitsEveryRecordDoneAndNothingTwice(Broker broker) throws Exception {
        Random random = new Random(SEED);
        List<AtExit> rounds = new ArrayList<>();
        for (int round = 0; round < SIGTERMS; round++) {
            String topic = broker.freshTopic("deploy", PARTITIONS);
            AtExit atExit = serveAndSigterm(broker, topic, 1 + random.nextInt(size(good(topic)) * 2 / 3), "-");
            rounds.add(atExit);
            assertThat(atExit.exitMillis()).as("SIGTERM to exit, ms (the stop had nothing slow to wait for)")
                    .isLessThanOrEqualTo(DEADLINE.plus(EXIT).toMillis());
            assertThat(atExit.committed()).as("committed at the exit = handled + dead-lettered")
                    .isEqualTo(union(atExit.handled(), atExit.deadLettered()));
            assertThat(size(atExit.handled())).as("the SIGTERM came in the middle of the topic").isLessThan(size(good(topic)));
        }
        writeFigures(rounds);
    }

    /**
     * KC-12, WP-24, KC-10: SIGTERM to a service whose record 0:2 ignores every interrupt: the stop
     * turns into an abort at the deadline, the process exits by itself once the grace has passed,
     * record 0:2 is neither handled nor committed, nothing it did not finish is committed, and the
     * next member handles exactly the rest.
     */
    @Test
    void aSigtermPastAStubbornRecordExitsAtDeadlinePlusGraceAndLosesNothing(Broker broker) throws Exception {
        String topic = broker.freshTopic("stubborn", PARTITIONS);
        AtExit atExit = serveAndSigterm(broker, topic, 10 + new Random(SEED + 1).nextInt(200), "0:2");
        assertThat(atExit.exitMillis()).as("SIGTERM to exit, ms: not before the deadline, not after deadline + grace + the JVM's exit")
                .isBetween(DEADLINE.toMillis(), DEADLINE.plus(GRACE).plus(EXIT).toMillis());
        TopicPartition zero = new TopicPartition(topic, 0);
        assertThat(atExit.handled().getOrDefault(zero, new TreeSet<>())).as("handled on partition 0").doesNotContain(2L);
        assertThat(atExit.committed().getOrDefault(zero, new TreeSet<>())).as("committed on partition 0").doesNotContain(2L);
        assertThat(union(atExit.handled(), atExit.deadLettered())).as("handled + dead-lettered, of what was committed")
                .satisfies(done -> atExit.committed().forEach((p, offsets) -> assertThat(done.get(p)).containsAll(offsets)));
    }

    /**
     * Fills {@code topic}, starts the service, sends it SIGTERM once {@code after} records are
     * witnessed, waits (bounded) for it to exit, reads the books at its exit, then finishes the
     * topic in this JVM and checks the books: every record handled or dead-lettered (nothing
     * lost), none handled twice, each malformed one dead-lettered once, every commit of handled
     * records only. {@return the books at the exit}
     */
    private AtExit serveAndSigterm(Broker broker, String topic, int after, String stubborn) throws Exception {
        String group = Broker.freshGroup("deploy");
        broker.produce(topic, PARTITIONS, PER_PARTITION);
        KafkaCrashTest.Witness child = new KafkaCrashTest.Witness("svc");
        KafkaCrashTest.Witness finisher = new KafkaCrashTest.Witness("finisher");
        Path err = dir.resolve(topic + ".err");
        try {
            Process process = ChildJvm.start(List.of("--enable-preview", "--sun-misc-unsafe-memory-access=allow"), child.out, err,
                    ServiceConsumer.class, broker.servers(), topic, group, "4", child.handlings.toString(), child.commits.toString(),
                    child.who, Long.toString(DEADLINE.toMillis()), Long.toString(GRACE.toMillis()), stubborn);
            long exitNanos = ChildJvm.sigtermOnceReady(process, () -> Waits.untilLookingEvery(LOOK,
                    after + " records handled, or the child gone", () -> !process.isAlive() || child.handled().size() >= after),
                    DEADLINE.plus(GRACE).plus(Bounds.WAIT), err);
            assertThat(process.exitValue()).as("exit status after SIGTERM (128 + 15); its errors: %s", ChildJvm.output(err))
                    .isEqualTo(143);
            Map<TopicPartition, NavigableSet<Long>> handledByChild = offsets(topic, child.handled());
            AtExit atExit = new AtExit(TimeUnit.NANOSECONDS.toMillis(exitNanos), handledByChild,
                    Recorded.nonEmpty(Recorded.committedDone(broker, group, topic)), deadLettered(broker, topic));
            KafkaCrashTest.assertCommitsFinished(child, union(handledByChild, atExit.deadLettered()), topic);

            Map<TopicPartition, NavigableSet<Long>> all = Recorded.all(topic, PARTITIONS, PER_PARTITION);
            Waits.untilLookingEvery(LOOK, "every record committed", () -> {
                try {
                    ServiceConsumer.finish(broker.servers(), topic, group, finisher.handlings, finisher.commits, finisher.who);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return Recorded.nonEmpty(Recorded.committedDone(broker, group, topic)).equals(all);
            });
            Map<TopicPartition, NavigableSet<Long>> handledByFinisher = offsets(topic, finisher.handled());
            assertThat(union(handledByChild, handledByFinisher)).as("handled (nothing lost)").isEqualTo(good(topic));
            assertThat(intersection(handledByChild, handledByFinisher)).as("handled twice").isEmpty();
            List<String> letters = broker.readAll(topic + "-dlt").stream().map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
            assertThat(letters).as("dead letters: the malformed records, each once").doesNotHaveDuplicates()
                    .hasSize(PARTITIONS * (int) java.util.stream.LongStream.range(0, PER_PARTITION).filter(ServiceConsumer::malformed).count());
            KafkaCrashTest.assertCommitsFinished(finisher, union(union(handledByChild, handledByFinisher), deadLettered(broker, topic)),
                    topic);
            return atExit;
        } finally {
            child.delete();
            finisher.delete();
        }
    }

    /** The SIGTERMs' figures, for the notes: target/kafka-deploys.md. */
    private static void writeFigures(List<AtExit> rounds) throws IOException {
        StringBuilder md = new StringBuilder("| SIGTERM | records handled at the exit | SIGTERM to exit (ms) |\n| --- | --- | --- |\n");
        for (int i = 0; i < rounds.size(); i++) {
            md.append(String.format(Locale.ROOT, "| %d | %d | %d |%n", i + 1, size(rounds.get(i).handled()), rounds.get(i).exitMillis()));
        }
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "kafka-deploys.md"), "KafkaDeployTest, " + rounds.size() + " SIGTERMs, " + PARTITIONS
                + " partitions of " + PER_PARTITION + " records, 4 workers, deadline " + DEADLINE + ", grace " + GRACE + ", seed " + SEED
                + "\n\n" + md);
    }

    /** {@return the records of {@code topic} that are not malformed, by partition} */
    private static Map<TopicPartition, NavigableSet<Long>> good(String topic) {
        Map<TopicPartition, NavigableSet<Long>> good = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
        Recorded.all(topic, PARTITIONS, PER_PARTITION).forEach((p, offsets) -> {
            NavigableSet<Long> kept = new TreeSet<>(offsets);
            kept.removeIf(ServiceConsumer::malformed);
            good.put(p, kept);
        });
        return good;
    }

    /** {@return the records of {@code topic} found in its dead-letter topic (their values are {@code partition-offset})} */
    private static Map<TopicPartition, NavigableSet<Long>> deadLettered(Broker broker, String topic) {
        Map<TopicPartition, NavigableSet<Long>> letters = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
        broker.readAll(topic + "-dlt").forEach(r -> {
            String value = new String(r.value(), StandardCharsets.UTF_8);
            int dash = value.indexOf('-');
            letters.computeIfAbsent(new TopicPartition(topic, Integer.parseInt(value.substring(0, dash))), p -> new TreeSet<>())
                    .add(Long.parseLong(value.substring(dash + 1)));
        });
        return letters;
    }

    /** How often a wait here looks: the conditions read the child's witness file; a tight loop would take the CPU the child needs. */
    private static final Duration LOOK = Duration.ofMillis(20);
}
