package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.ThreadDump;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/** Sources, handlers and sinks for the pool's tests: the workloads the contract talks about. */
final class Workloads {
    private Workloads() {}

    /** Throws {@code thrown}, checked or not, where the compiler expects an unchecked exception: a source or sink breaking its contract. */
    @SuppressWarnings({"unchecked", "TypeParameterUnusedInFormals"}) // the sneaky throw: X is erased
    static <X extends Throwable> X sneaky(Throwable thrown) throws X {
        throw (X) thrown;
    }

    /** The result every succeeding handler here produces for {@code item}. */
    static String result(int item) {
        return "r" + item;
    }

    /** The items 0, 1, 2, ... (up to {@code limit}, or without end), counting how many were pulled. */
    static final class CountingSource implements Iterator<Integer> {
        private final int limit;
        private final AtomicInteger pulled = new AtomicInteger();

        private CountingSource(int limit) {
            this.limit = limit;
        }

        static CountingSource of(int limit) {
            return new CountingSource(limit);
        }

        static CountingSource endless() {
            return new CountingSource(Integer.MAX_VALUE);
        }

        @Override
        public boolean hasNext() {
            return pulled.get() < limit;
        }

        @Override
        public Integer next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return pulled.getAndIncrement();
        }

        int pulled() {
            return pulled.get();
        }
    }

    /** A source that gives {@code items} items and then waits for more, until interrupted: a feed, a socket. */
    static final class WaitingFeed implements Iterator<Integer> {
        private final int items;
        private int pulled;
        final CountDownLatch waiting = new CountDownLatch(1);

        WaitingFeed(int items) {
            this.items = items;
        }

        @Override
        public boolean hasNext() {
            if (pulled < items) {
                return true;
            }
            waiting.countDown();
            try {
                new CountDownLatch(1).await(); // no more data yet: only an interrupt ends this wait
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("the feed was interrupted", e);
            }
            throw new AssertionError("unreachable: the latch never opens");
        }

        @Override
        public Integer next() {
            return pulled++;
        }

        void awaitWaiting() throws InterruptedException {
            assertThat(waiting.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the feed waits for data").isTrue();
        }
    }

    /** The items 0, 1, ... up to {@code limit}, calling {@code beforeEach} with each before it is returned: a source that acts, or throws, at a chosen item. */
    static Iterator<Integer> calling(int limit, IntConsumer beforeEach) {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < limit;
            }

            @Override
            public Integer next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                beforeEach.accept(next);
                return next++;
            }
        };
    }

    /** {@link #calling} without end. */
    static Iterator<Integer> endlessCalling(IntConsumer beforeEach) {
        return calling(Integer.MAX_VALUE, beforeEach);
    }

    /** A gate that handlers wait at until the test opens it, counting who has arrived. */
    static final class Gate {
        private final CountDownLatch open = new CountDownLatch(1);
        private final Semaphore arrived = new Semaphore(0);

        /** Called by a handler: waits (interruptibly) until the gate opens. */
        void pass() throws InterruptedException {
            arrived.release();
            open.await();
        }

        /** Waits until {@code n} more handlers have arrived at the gate. */
        void awaitArrivals(int n) throws InterruptedException {
            if (!arrived.tryAcquire(n, Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError(n + " handlers did not reach the gate within " + Bounds.WAIT);
            }
        }

        void open() {
            open.countDown();
        }
    }

    /** Succeeds at once with {@link #result}. */
    static Handler<Integer, String> echo() {
        return Workloads::result;
    }

    /** Succeeds once the gate opens. */
    static Handler<Integer, String> behind(Gate gate) {
        return item -> {
            gate.pass();
            return result(item);
        };
    }

    /**
     * Ignores the first {@code swallowed} interrupts (each noted in {@code interrupts}) and gives up
     * on the next one by throwing {@code InterruptedException}: a handler that is stopped only by
     * escalation. With a large {@code swallowed} it outlives every round until {@code release}
     * opens.
     */
    static Handler<Integer, String> swallowing(int swallowed, AtomicInteger interrupts, CountDownLatch release) {
        return item -> {
            int seen = 0;
            while (true) {
                try {
                    release.await();
                    return result(item);
                } catch (InterruptedException e) {
                    interrupts.incrementAndGet();
                    if (++seen > swallowed) {
                        throw e;
                    }
                }
            }
        };
    }

    /** Blocks until interrupted, then gives up: a handler that always times out but stops at once. */
    static Handler<Integer, String> untilInterrupted() {
        return item -> {
            new CountDownLatch(1).await();
            throw new AssertionError("unreachable: the latch never opens");
        };
    }

    /** Counts how many attempts each item gets. */
    static final class Attempts {
        private final Map<Integer, AtomicInteger> byItem = new ConcurrentHashMap<>();

        int next(int item) {
            return byItem.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
        }

        int of(int item) {
            AtomicInteger n = byItem.get(item);
            return n == null ? 0 : n.get();
        }

        Map<Integer, Integer> all() {
            Map<Integer, Integer> copy = new ConcurrentHashMap<>();
            byItem.forEach((item, n) -> copy.put(item, n.get()));
            return copy;
        }
    }

    /** A sink that keeps every event, optionally throwing on every call as well. */
    static final class RecordingSink implements MetricsSink {
        private final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
        private final boolean fail;

        RecordingSink(boolean fail) {
            this.fail = fail;
        }

        @Override
        public void record(MetricsEvent event, String detail) throws Exception {
            events.add(event.id() + " " + detail);
            if (fail) {
                throw new IllegalStateException("this sink always fails");
            }
        }

        long count(MetricsEvent event) {
            return events.stream().filter(e -> e.startsWith(event.id() + " ")).count();
        }

        List<String> named(MetricsEvent event) {
            return events.stream().filter(e -> e.startsWith(event.id() + " ")).toList();
        }

        int size() {
            return events.size();
        }

        /** The events whose names start with one of {@code prefixes}, as "name detail", in the order the sink received them. */
        List<String> startingWith(String... prefixes) {
            return events.stream().filter(e -> Arrays.stream(prefixes).anyMatch(e::startsWith)).toList();
        }
    }

    /** Iterates every result; returns them in the order they came. Exceptions from the end propagate. */
    static <R> List<R> drain(Results<?, R> results) {
        List<R> got = new ArrayList<>();
        results.forEachRemaining(got::add);
        return got;
    }

    /**
     * Reads {@code results} to the end, where a {@link PoolAborted} is expected (the outcome says
     * whether the run was aborted), then checks the books as {@link #assertLedgerExact(Results)};
     * {@return the outcome}
     */
    static <T> RunOutcome<T> drainPastAnAbort(Results<T, ?> results) {
        try {
            drain(results);
        } catch (PoolAborted expected) {
            // the outcome says which
        }
        return assertLedgerExact(results);
    }

    /**
     * WP-2: the run has ended and its books balance: every pulled item has exactly one fate, the
     * outcome's lists are exactly the counters, and no more results were delivered than produced
     * (every one of them, if the consumer read to the end: {@link #assertEveryResultDelivered}).
     */
    static <T> RunOutcome<T> assertLedgerExact(Results<T, ?> results) {
        return assertLedgerExact(results, Long.MAX_VALUE);
    }

    /**
     * As {@link #assertLedgerExact(Results)}, for a run that keeps only the first
     * {@code failuresKept} failures with their causes and counts every one (WP-23).
     */
    static <T> RunOutcome<T> assertLedgerExact(Results<T, ?> results, long failuresKept) {
        RunOutcome<T> outcome = results.outcome().orElseThrow(() -> new AssertionError("the run has not ended"));
        PoolStats stats = results.stats();
        assertThat(stats.succeeded() + stats.failed() + stats.discarded() + stats.cancelled() + stats.deferred())
                .as("succeeded + failed + discarded + cancelled + deferred = pulled, in %s", stats).isEqualTo(stats.pulled());
        assertThat(outcome.failures()).as("the outcome's failures").hasSize((int) Math.min(stats.failed(), failuresKept));
        assertThat(outcome.discarded()).as("the outcome's discarded items").hasSize((int) stats.discarded());
        assertThat(outcome.cancelled()).as("the outcome's cancelled items").hasSize((int) stats.cancelled());
        assertThat(stats.inFlight()).as("in flight at the end").isZero();
        assertThat(stats.currentLead()).as("the lead at the end (pulled minus settled)").isZero();
        assertThat(stats.delivered()).as("delivered").isLessThanOrEqualTo(stats.succeeded());
        return outcome;
    }

    /** WP-2: a consumer that read to the end of the iteration received every result the run produced. */
    static void assertEveryResultDelivered(Results<Integer, ?> results) {
        assertThat(results.stats().delivered()).as("delivered, in %s", results.stats())
                .isEqualTo(results.stats().succeeded());
    }

    /** WP-10: the pool has no thread left, by its own count and by a JSON thread dump of the JVM. */
    static void assertNoThreadsLeft(WorkerPool<?, ?> pool) {
        assertThat(pool.liveThreads()).as("threads of %s still running", pool.name()).isZero();
        assertThat(ThreadDump.threadsNamed(pool.name() + "-")).as("threads of %s in a JSON thread dump", pool.name())
                .isEmpty();
    }
}
