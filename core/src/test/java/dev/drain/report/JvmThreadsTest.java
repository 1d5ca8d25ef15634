package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import dev.drain.support.ThreadKind;
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
 * WP-10: the leak checks' measure, {@link JvmThreads.Snapshot#tasks()}, counts every thread of
 * the JVM (virtual ones included, but the scheduler's carriers), sees a thread that anyone leaves
 * running, and is still once the threads are gone.
 */
class JvmThreadsTest {

    @BeforeAll
    static void warmUp() {
        JvmThreads.warmUp();
    }

    private static int tasks() {
        return JvmThreads.dump().tasks().size();
    }

    /** WP-10: a thread started and left running is counted, on either kind of thread, and the count falls back when it ends. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aThreadLeftRunningIsCounted(ThreadKind kind) throws Exception {
        int before = tasks();
        CountDownLatch release = new CountDownLatch(1);
        Thread leaked = kind.start("leaked-on-purpose", () -> {
            try {
                release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(tasks() - before).as("while it runs").isEqualTo(1);
            assertThat(JvmThreads.dump().threadsNamed("leaked-on-purpose")).singleElement()
                    .satisfies(t -> assertThat(t.virtual()).isEqualTo(kind == ThreadKind.VIRTUAL));
        } finally {
            release.countDown();
            assertThat(leaked.join(Bounds.WAIT)).isTrue();
        }
        assertThat(tasks() - before).as("once it has ended").isZero();
    }

    /** WP-10: a pool run that blocks in socket I/O, times out, retries and reports to a sink leaves the JVM's count where it was. */
    @Test
    void aPoolRunLeavesTheCountWhereItWas() throws Exception {
        try (ServerSocket stalling = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int before = tasks();
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
            assertThat(tasks() - before).isZero();
        }
    }

    /** WP-10: a handler that starts an unstructured thread leaks it, and the measure sees exactly that one. */
    @Test
    void aThreadLeakedByAHandlerIsSeen() throws Exception {
        int before = tasks();
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> leaked = new java.util.concurrent.CopyOnWriteArrayList<>();
        WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(item -> {
            leaked.add(Thread.ofVirtual().name("leaked-by-a-handler").start(() -> {
                try {
                    release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            return item;
        }).workers(1).queueSize(1).build();
        try (Results<Integer, Integer> results = pool.run(List.of(1))) {
            results.forEachRemaining(result -> { });
        }
        try {
            assertThat(pool.liveThreads()).as("the pool's own count cannot see it").isZero();
            assertThat(tasks() - before).as("the JVM's count does").isEqualTo(1);
        } finally {
            release.countDown();
            for (Thread thread : leaked) {
                assertThat(thread.join(Bounds.WAIT)).isTrue();
            }
        }
        assertThat(tasks() - before).isZero();
    }
}
