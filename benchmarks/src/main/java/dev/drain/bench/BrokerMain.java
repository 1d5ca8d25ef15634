package dev.drain.bench;

import dev.drain.lab.LocalKafka;

/**
 * The broker of {@code benchmarks/run kafka}, in a JVM of its own: the harnesses measured against
 * it, drain's and Parallel Consumer's (whose Kafka client is 3.9.1), each run in theirs. Starts a
 * {@link LocalKafka}, prints {@code servers=<bootstrap servers>}, and stops it when its standard
 * input ends.
 */
public final class BrokerMain {
    private BrokerMain() {}

    public static void main(String[] args) throws Exception {
        try (LocalKafka kafka = LocalKafka.start()) {
            System.out.println("servers=" + kafka.bootstrapServers());
            System.out.flush();
            while (System.in.read() != -1) {
                // until the driver closes our input
            }
        }
    }
}
