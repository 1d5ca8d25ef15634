package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import dev.drain.support.Waits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-3, WP-10 with real blocking I/O: handlers read from a loopback server that accepts and then
 * stalls. On a virtual thread, an interrupt closes the socket and ends the blocked read, so the
 * pool's timeout stops the attempt, and nothing leaks.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class BlockingIoTest {
    private final WorkerPool.IntakeKind intake;
    /** Accepts connections through its backlog and never answers: every read from it blocks. */
    private final ServerSocket stalling;
    private final AtomicInteger readsEnded = new AtomicInteger();

    BlockingIoTest(WorkerPool.IntakeKind intake) throws IOException {
        this.intake = intake;
        this.stalling = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws IOException {
        stalling.close();
    }

    /** Connects to the stalling server and reads: blocks until interrupted. */
    private String readStalled(int item) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), stalling.getLocalPort());
             InputStream in = socket.getInputStream()) {
            return "read " + in.read() + " for " + item;
        } finally {
            readsEnded.incrementAndGet();
        }
    }

    /** WP-3: an attempt blocked in a socket read on a virtual thread is stopped by the timeout's interrupt. */
    @Test
    void timeoutInterruptsABlockedSocketRead() {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(this::readStalled)
                .intake(intake).workers(3).queueSize(3).itemTimeout(Duration.ofMillis(200)).build();
        try (Results<Integer, String> results = pool.run(List.of(1, 2, 3))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).hasSize(3)
                    .allSatisfy(f -> assertThat(f.cause()).isInstanceOf(TimeoutException.class));
            assertThat(results.stats().escalations()).as("one interrupt was enough").isZero();
        }
        assertThat(readsEnded).hasValue(3);
        assertNoThreadsLeft(pool);
    }

    /** WP-12, WP-10: an abort cancels attempts blocked in socket reads, and nothing leaks. */
    @Test
    void abortInterruptsBlockedSocketReads() {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(this::readStalled)
                .intake(intake).workers(2).queueSize(2).itemTimeout(Duration.ofMinutes(1)).build();
        try (Results<Integer, String> results = pool.run(List.of(1, 2, 3, 4))) {
            // Both workers are in their attempts, and the producer has pulled the other two items
            // (queued, or held for the put): otherwise an item not yet pulled is neither.
            Waits.until("two attempts running and every item pulled",
                    () -> results.stats().inFlight() == 2 && results.stats().pulled() == 4);
            pool.abort();
            PoolAborted aborted = catchThrowableOfType(PoolAborted.class, results::hasNext);
            assertThat(aborted.cancelled()).hasSize(2);
            assertThat(aborted.discarded()).hasSize(2);
        }
        assertNoThreadsLeft(pool);
    }
}
