package dev.drain.lab;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A Kafka cluster in this JVM, for the tests, the example and a user with no broker of their own
 * (decision 0043): one KRaft node that is both controller and broker, started from Maven
 * artifacts alone ({@code org.apache.kafka:kafka-test-common-runtime}, a dependency of this lab
 * artifact, never of {@code drain-kafka}: decision 0050), in a temporary folder, on free ports,
 * for as long as this object is open. It
 * starts in 4 to 7 seconds on two cores. Topics are not created on first use: a topic must be
 * created ({@link #createTopic}) before it is read or written.
 *
 * <p>Its group coordinator runs the consumer group protocol of KIP-848 with short session
 * timeouts (6 s), so that a consumer that dies gives its partitions up in seconds.
 */
public final class LocalKafka implements AutoCloseable {
    /** How long a consumer of a group may stay silent before the coordinator takes its partitions. */
    public static final int SESSION_TIMEOUT_MS = 6_000;

    private final KafkaClusterTestKit cluster;
    /** Set by the first {@link #close()}: the kit's own close is not idempotent; guarded by this. */
    private boolean closed;

    private LocalKafka(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    /**
     * Formats a fresh cluster folder, starts the node and waits until its broker is ready.
     *
     * @return the running cluster
     * @throws IOException if the cluster did not start; nothing is left running
     * @throws InterruptedException if interrupted while it started (it is then stopped)
     */
    public static LocalKafka start() throws IOException, InterruptedException {
        KafkaClusterTestKit cluster;
        try {
            cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .build())
                    .setConfigProp("offsets.topic.replication.factor", "1")
                    .setConfigProp("offsets.topic.num.partitions", "4")
                    .setConfigProp("transaction.state.log.replication.factor", "1")
                    .setConfigProp("transaction.state.log.min.isr", "1")
                    .setConfigProp("share.coordinator.state.topic.replication.factor", "1")
                    .setConfigProp("share.coordinator.state.topic.min.isr", "1")
                    .setConfigProp("auto.create.topics.enable", "false")
                    .setConfigProp("group.initial.rebalance.delay.ms", "0")
                    .setConfigProp("group.consumer.min.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS))
                    .setConfigProp("group.consumer.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS))
                    .setConfigProp("group.consumer.min.heartbeat.interval.ms", "500")
                    .setConfigProp("group.consumer.heartbeat.interval.ms", "500")
                    .build();
        } catch (Exception e) {
            throw new IOException("the local Kafka cluster could not be built: " + e, e);
        }
        try {
            formatQuietly(cluster);
            cluster.startup();
            cluster.waitForReadyBrokers();
            return new LocalKafka(cluster);
        } catch (InterruptedException e) {
            closeQuietly(cluster, e);
            throw e;
        } catch (Exception e) {
            closeQuietly(cluster, e);
            throw new IOException("the local Kafka cluster did not start: " + e, e);
        }
    }

    /** {@return the broker's address, for {@code bootstrap.servers}} */
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    /**
     * Creates a topic on the cluster and waits until it exists.
     *
     * @param name the topic's name
     * @param partitions how many partitions it has
     * @param configs topic settings ({@code min.insync.replicas}, ...), none for the defaults
     * @throws IOException if the cluster refused it (the topic exists, a setting is wrong)
     * @throws InterruptedException if interrupted while waiting
     */
    public void createTopic(String name, int partitions, Map<String, String> configs) throws IOException, InterruptedException {
        Objects.requireNonNull(name, "name");
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get();
        } catch (ExecutionException e) {
            throw new IOException("could not create the topic " + name + ": " + e.getCause(), e.getCause());
        }
    }

    /** {@return an admin client of the cluster, which the caller closes} */
    public Admin admin() {
        return cluster.admin();
    }

    /**
     * Stops the node and deletes its folder. Idempotent.
     *
     * @throws IOException if it did not stop cleanly
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cluster.close();
        } catch (Exception e) {
            throw new IOException("the local Kafka cluster did not stop cleanly: " + e, e);
        }
    }

    /** The kit itself, for tests that stop the broker under a consumer. */
    KafkaClusterTestKit cluster() {
        return cluster;
    }

    /**
     * Formats the cluster's folders. Kafka's formatter prints two lines on {@code System.out},
     * which it takes when the kit creates it inside {@code format()}: standard output is a sink for
     * that moment, so that a test run and the lesson print nothing of it.
     */
    private static void formatQuietly(KafkaClusterTestKit cluster) throws Exception {
        synchronized (LocalKafka.class) {
            PrintStream out = System.out;
            System.setOut(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
            try {
                cluster.format();
            } finally {
                System.setOut(out);
            }
        }
    }

    private static void closeQuietly(KafkaClusterTestKit cluster, Exception cause) {
        try {
            cluster.close();
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }
}
