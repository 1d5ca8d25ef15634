package dev.drain.bench;

import com.softwaremill.jox.Channel;
import com.softwaremill.jox.ChannelDoneException;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Item 3: {@code n} virtual threads are blocked on one queue (set up before the measurement, and
 * checked to be parked); the score is the time from the releasing call until every one of them
 * has returned from its blocking call (a latch that each counts down last). One shot per
 * iteration; each iteration's threads are joined in its tear-down, so none outlives it.
 *
 * <p>{@link #getters}: blocked in {@code get()} / {@code take()} on an empty queue. Released by
 * {@code shutdown()}, by {@code n} poison pills put into an {@code ArrayBlockingQueue(n)} (the
 * baseline), by interrupting each thread, or, for the best peer, by jox's {@code Channel.done()}
 * on a buffered channel of {@code n} whose receivers are blocked in {@code receive()} (jox keeps
 * no count of its waiting receivers, so the set-up waits only for every thread to be parked).
 * And a floor with no queue at all: {@code LockSupport.unpark}, {@code n} threads parked on a
 * flag, released by raising it and unparking each thread, with no lock either; what is left is
 * waking, running and ending {@code n} virtual threads.
 *
 * <p>{@link #putters}: blocked in {@code put()} on a full queue of {@value #PUT_CAPACITY}.
 * Released by {@code shutdown()}; an {@code ArrayBlockingQueue} has no way to wake its putters
 * but making room, so the baseline is a consumer taking {@code n} items (each take lets one
 * putter in), and the other way is interrupting each thread.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 10)
@Measurement(iterations = 20)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class WakeupBench {
    static final int PUT_CAPACITY = 16;
    private static final Integer ITEM = 42;

    /** Blocked getters. */
    @State(Scope.Thread)
    public static class Getters {
        @Param({"1000", "10000"})
        int n;

        @Param({"ShutdownQueue.shutdown", "ArrayBlockingQueue.pills", "ArrayBlockingQueue.interrupt", "JoxChannel.done",
            "LockSupport.unpark"})
        String release = "";

        final Blocked blocked = new Blocked();
        private ShutdownQueue<Integer> queue = new ShutdownQueue<>(1);
        private ArrayBlockingQueue<Integer> abq = new ArrayBlockingQueue<>(1);
        private Channel<Integer> channel = Channel.newBufferedChannel(1);
        private Flag flag = new Flag();

        @Setup(Level.Iteration)
        public void block() {
            switch (release) {
                case "LockSupport.unpark" -> {
                    Flag f = new Flag();
                    flag = f;
                    blocked.start(n, () -> {
                        while (!f.raised) {
                            LockSupport.park(f);
                        }
                    }, () -> true);
                }
                case "ShutdownQueue.shutdown" -> {
                    ShutdownQueue<Integer> q = new ShutdownQueue<>(n);
                    queue = q;
                    blocked.start(n, () -> {
                        try {
                            q.get();
                            throw new AssertionError("got an item from an empty queue");
                        } catch (QueueShutDown expected) {
                            // released
                        }
                    }, () -> q.waitingGetters() == n);
                }
                case "ArrayBlockingQueue.pills", "ArrayBlockingQueue.interrupt" -> {
                    ArrayBlockingQueue<Integer> q = new ArrayBlockingQueue<>(n);
                    abq = q;
                    boolean pills = release.endsWith("pills");
                    blocked.start(n, () -> {
                        try {
                            q.take();
                            if (!pills) {
                                throw new AssertionError("took an item from an empty queue");
                            }
                        } catch (InterruptedException e) {
                            if (pills) {
                                throw e;
                            }
                        }
                    }, () -> q.isEmpty());
                }
                case "JoxChannel.done" -> {
                    Channel<Integer> c = Channel.newBufferedChannel(n);
                    channel = c;
                    blocked.start(n, () -> {
                        try {
                            c.receive();
                            throw new AssertionError("received an item from an empty channel");
                        } catch (ChannelDoneException expected) {
                            // released
                        }
                    }, () -> true);
                }
                default -> throw new IllegalArgumentException(release);
            }
        }

        @TearDown(Level.Iteration)
        public void joinAll() {
            blocked.joinAll();
        }
    }

    /** Blocked putters. */
    @State(Scope.Thread)
    public static class Putters {
        @Param({"1000", "10000"})
        int n;

        @Param({"ShutdownQueue.shutdown", "ArrayBlockingQueue.takes", "ArrayBlockingQueue.interrupt"})
        String release = "";

        final Blocked blocked = new Blocked();
        private ShutdownQueue<Integer> queue = new ShutdownQueue<>(1);
        private ArrayBlockingQueue<Integer> abq = new ArrayBlockingQueue<>(1);

        @Setup(Level.Iteration)
        public void block() throws Exception {
            switch (release) {
                case "ShutdownQueue.shutdown" -> {
                    ShutdownQueue<Integer> q = new ShutdownQueue<>(PUT_CAPACITY);
                    for (int i = 0; i < PUT_CAPACITY; i++) {
                        q.putNowait(ITEM);
                    }
                    queue = q;
                    blocked.start(n, () -> {
                        try {
                            q.put(ITEM);
                            throw new AssertionError("put into a full queue");
                        } catch (QueueShutDown expected) {
                            // released
                        }
                    }, () -> q.waitingPutters() == n);
                }
                case "ArrayBlockingQueue.takes", "ArrayBlockingQueue.interrupt" -> {
                    ArrayBlockingQueue<Integer> q = new ArrayBlockingQueue<>(PUT_CAPACITY);
                    for (int i = 0; i < PUT_CAPACITY; i++) {
                        q.add(ITEM);
                    }
                    abq = q;
                    boolean takes = release.endsWith("takes");
                    blocked.start(n, () -> {
                        try {
                            q.put(ITEM);
                            if (!takes) {
                                throw new AssertionError("put into a full queue");
                            }
                        } catch (InterruptedException e) {
                            if (takes) {
                                throw e;
                            }
                        }
                    }, () -> q.remainingCapacity() == 0);
                }
                default -> throw new IllegalArgumentException(release);
            }
        }

        @TearDown(Level.Iteration)
        public void joinAll() {
            blocked.joinAll();
        }
    }

    @Benchmark
    public void getters(Getters s) throws InterruptedException {
        switch (s.release) {
            case "ShutdownQueue.shutdown" -> s.queue.shutdown();
            case "JoxChannel.done" -> s.channel.done();
            case "LockSupport.unpark" -> {
                s.flag.raised = true;
                s.blocked.unparkAll();
            }
            case "ArrayBlockingQueue.pills" -> {
                for (int i = 0; i < s.n; i++) {
                    s.abq.put(ITEM);
                }
            }
            default -> s.blocked.interruptAll();
        }
        s.blocked.awaitReturned();
    }

    @Benchmark
    public void putters(Putters s) throws InterruptedException {
        switch (s.release) {
            case "ShutdownQueue.shutdown" -> s.queue.shutdown();
            case "ArrayBlockingQueue.takes" -> {
                for (int i = 0; i < s.n; i++) {
                    s.abq.take();
                }
            }
            default -> s.blocked.interruptAll();
        }
        s.blocked.awaitReturned();
    }

    /** What the floor's threads wait for. */
    static final class Flag {
        volatile boolean raised;
    }

    /** {@code n} virtual threads, each making one blocking call and then counting down a latch. */
    static final class Blocked {
        private List<Thread> threads = List.of();
        private CountDownLatch returned = new CountDownLatch(0);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        void start(int n, Threads.Task call, BooleanSupplier allQueued) {
            CountDownLatch latch = new CountDownLatch(n);
            List<Thread> started = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                started.add(Thread.ofVirtual().start(() -> {
                    try {
                        call.run();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        latch.countDown();
                    }
                }));
            }
            threads = started;
            returned = latch;
            Threads.awaitAllWaiting(started, allQueued);
        }

        void unparkAll() {
            for (Thread thread : threads) {
                LockSupport.unpark(thread);
            }
        }

        void interruptAll() {
            for (Thread thread : threads) {
                thread.interrupt();
            }
        }

        void awaitReturned() throws InterruptedException {
            returned.await();
        }

        void joinAll() {
            Threads.joinAll(threads, Duration.ofSeconds(30));
            Throwable failed = failure.getAndSet(null);
            if (failed != null) {
                throw new IllegalStateException("a blocked thread failed", failed);
            }
        }
    }
}
