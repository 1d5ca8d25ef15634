package dev.drain.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-10: the leak checks' measure, {@link JvmThreads.Snapshot#tasksNotIn}, counts the threads of
 * the JVM (virtual ones included, but the scheduler's carriers) started since a dump and still
 * alive: it sees a thread that anyone leaves running, is still once the threads are gone, and a
 * thread that ends elsewhere meanwhile does not move it.
 */
class JvmThreadsTest {

    @BeforeAll
    static void warmUp() {
        JvmThreads.warmUp();
    }

    private static JvmThreads.Snapshot dump() {
        return JvmThreads.dump();
    }

    private static int startedSince(JvmThreads.Snapshot before) {
        return JvmThreads.dump().tasksNotIn(before).size();
    }

    /** WP-10: a thread started and left running is counted, on either kind of thread, and the count falls back when it ends. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aThreadLeftRunningIsCounted(ThreadKind kind) throws Exception {
        JvmThreads.Snapshot before = dump();
        CountDownLatch release = new CountDownLatch(1);
        Thread leaked = kind.start("leaked-on-purpose", () -> awaitQuietly(release));
        try {
            assertThat(startedSince(before)).as("while it runs").isEqualTo(1);
            assertThat(JvmThreads.dump().threadsNamed("leaked-on-purpose")).singleElement()
                    .satisfies(t -> assertThat(t.virtual()).isEqualTo(kind == ThreadKind.VIRTUAL));
        } finally {
            release.countDown();
            assertThat(leaked.join(Bounds.WAIT)).isTrue();
        }
        assertThat(startedSince(before)).as("once it has ended").isZero();
    }

    /** WP-10: a thread alive before the measure's first dump that ends before its second is no leak and cannot cancel one out, on either kind of thread. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aThreadThatEndsElsewhereDoesNotMoveTheMeasure(ThreadKind kind) throws Exception {
        CountDownLatch releaseEarlier = new CountDownLatch(1);
        CountDownLatch releaseLeak = new CountDownLatch(1);
        Thread earlier = kind.start("ends-meanwhile", () -> awaitQuietly(releaseEarlier));
        Thread leaked = null;
        try {
            JvmThreads.Snapshot before = dump();
            releaseEarlier.countDown();
            assertThat(earlier.join(Bounds.WAIT)).isTrue();
            assertThat(startedSince(before)).as("after an end elsewhere").isZero();
            leaked = kind.start("leaked-meanwhile", () -> awaitQuietly(releaseLeak));
            assertThat(startedSince(before)).as("a leak beside the end elsewhere").isEqualTo(1);
        } finally {
            releaseEarlier.countDown();
            releaseLeak.countDown();
            assertThat(earlier.join(Bounds.WAIT)).isTrue();
            if (leaked != null) {
                assertThat(leaked.join(Bounds.WAIT)).isTrue();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** WP-10: a pool run that blocks in socket I/O, times out, retries and reports to a sink leaves the JVM's count where it was. */
    @Test
    void aPoolRunLeavesTheCountWhereItWas() throws Exception {
        try (ServerSocket stalling = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            JvmThreads.Snapshot before = dump();
            WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(item -> {
                if (item % 3 == 0) {
                    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), stalling.getLocalPort())) {
                        return socket.getInputStream().read(); // blocks until the timeout's interrupt closes it
                    }
                }
                return item;
            }).workers(4).queueSize(2).itemTimeout(Duration.ofMillis(50)).metrics((event, detail) -> { }).build();
            try (Results<Integer, Integer> results = pool.run(IntStream.range(0, 12).boxed())) {
                results.forEachRemaining(result -> { });
            } catch (RuntimeException expected) {
                // the socket items time out: the run ends with their failures
            }
            assertThat(startedSince(before)).isZero();
        }
    }

    /** WP-10: a handler that starts an unstructured thread leaks it, and the measure sees exactly that one. */
    @Test
    void aThreadLeakedByAHandlerIsSeen() throws Exception {
        JvmThreads.Snapshot before = dump();
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> leaked = new java.util.concurrent.CopyOnWriteArrayList<>();
        WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(item -> {
            leaked.add(Thread.ofVirtual().name("leaked-by-a-handler").start(() -> awaitQuietly(release)));
            return item;
        }).workers(1).queueSize(1).build();
        try (Results<Integer, Integer> results = pool.run(List.of(1))) {
            results.forEachRemaining(result -> { });
        }
        try {
            assertThat(pool.liveThreads()).as("the pool's own count cannot see it").isZero();
            assertThat(startedSince(before)).as("the JVM's count does").isEqualTo(1);
        } finally {
            release.countDown();
            for (Thread thread : leaked) {
                assertThat(thread.join(Bounds.WAIT)).isTrue();
            }
        }
        assertThat(startedSince(before)).isZero();
    }
}
