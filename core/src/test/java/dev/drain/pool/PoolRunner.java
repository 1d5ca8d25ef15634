package dev.drain.pool;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.PoolWorkload.Ending;
import dev.drain.pool.PoolWorkload.Fault;
import dev.drain.support.Bounds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.jspecify.annotations.Nullable;

/**
 * Runs one {@link PoolWorkload} and reports what happened: the run is made on its own owner thread
 * (of the workload's kind), inside a {@link ScopedValue} binding of the caller's, with a fault
 * injected into one callback and the ending the workload asks for; every thread of the JVM is
 * counted before and after ({@link JvmThreads}).
 */
final class PoolRunner {
    private PoolRunner() {}

    /** The pool's item timeout in these runs: short, so the items that time out keep each run quick. */
    static final Duration TIMEOUT = Duration.ofMillis(30);
    /** The settler's batches in these runs: small, so that a run of a few items has several (WP-22). */
    static final int SETTLE_BATCH = 3;
    /**
     * A run that has not ended after this long has hung (the slowest ends in well under a second);
     * {@code -Ddrain.property.runBound=PT3S} shortens it where runs are expected to hang.
     */
    static final Duration RUN_BOUND = Duration.parse(System.getProperty("drain.property.runBound", "PT10S"))
            .multipliedBy(Bounds.FACTOR);
    /** What the caller binds around each run; every callback must see it. */
    static final ScopedValue<String> CALLER = ScopedValue.newInstance();
    /** A value no attempt may see from another: each sets it, and none should find it set. */
    private static final ThreadLocal<Integer> LOCAL = new ThreadLocal<>();
    private static final AtomicLong RUNS = new AtomicLong();

    /**
     * What a run showed.
     *
     * @param end what the run's end says of its books
     * @param results the results the consumer received
     * @param endThrew the class of what the iteration's end threw, or {@code ""}
     * @param took how long the run took, from run() to the end of its close()
     * @param hung whether it did not end within {@link #RUN_BOUND}
     * @param liveThreadsAtEnd the pool's own count of its threads when the iteration ended
     * @param newThreadsAlive live threads of the JVM after the run that were not alive before it, by
     *     thread id ({@link JvmThreads.Snapshot#tasksNotIn}): the run's leaks, whatever made them
     * @param leakedByHandlers threads the handlers started and left running on purpose
     * @param crossings attempts that saw another item's context or ThreadLocal
     * @param bindingMisses callbacks that did not see the caller's binding
     * @param sourceCloses how many times the source was closed
     * @param wrongThreadCalls what the calls from another thread did (WRONG_THREAD endings)
     * @param reachedLeadBound whether the lead reached queueSize + workers + 1
     * @param endedAfterTheLastResult whether the ending came only once the results had run out
     * @param mostHandlersAtOnce the most handlers that ran at the same moment
     * @param outOfOrder events the sink received for an item before its {@code item.accepted}, or
     *     after the event that settled it
     */
    record Observed(PoolApi.End end, List<Integer> results, String endThrew, Duration took, boolean hung,
                    int liveThreadsAtEnd, int newThreadsAlive, int leakedByHandlers, List<String> crossings,
                    List<String> bindingMisses, int sourceCloses, List<String> wrongThreadCalls, boolean reachedLeadBound,
                    boolean endedAfterTheLastResult, int mostHandlersAtOnce, List<String> outOfOrder,
                    List<Settlement<Integer>> offered, int settlerCalls) {}

    /** Runs {@code w} to its end. */
    static Observed run(PoolWorkload w) {
        JvmThreads.warmUp();
        Trial trial = new Trial(w);
        try {
            JvmThreads.Snapshot before = JvmThreads.dump();
            long start = System.nanoTime();
            Thread owner = w.consumer().start("pool-property-owner", trial::consume);
            boolean ended = joined(owner, RUN_BOUND);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            if (!ended) { // a hang: make it end, so the next run starts clean, and report it
                Trial.onAnotherThread(trial.pool::abort); // never on this thread: a broken pool could disturb it
                owner.interrupt();
                joined(owner, Bounds.WAIT);
            }
            int newThreadsAlive = JvmThreads.dump().tasksNotIn(before).size();
            return trial.observed(took, !ended, newThreadsAlive);
        } finally {
            trial.releaseLeaks();
        }
    }

    private static boolean joined(Thread thread, Duration bound) {
        try {
            return thread.join(bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a run", e);
        }
    }

    /** One run's pool, callbacks and records. */
    private static final class Trial {
        final PoolWorkload w;
        final String tag = "run-" + RUNS.incrementAndGet();
        final WorkerPool<Integer, Integer> pool;
        final Map<Integer, AtomicInteger> attempts = new ConcurrentHashMap<>();
        final List<String> crossings = new CopyOnWriteArrayList<>();
        final List<String> bindingMisses = new CopyOnWriteArrayList<>();
        final List<Thread> leaked = new CopyOnWriteArrayList<>();
        final CountDownLatch releaseLeaks = new CountDownLatch(1);
        final AtomicInteger sourceCloses = new AtomicInteger();
        final List<String> wrongThreadCalls = new CopyOnWriteArrayList<>();
        final List<Integer> results = new CopyOnWriteArrayList<>();
        final AtomicReference<String> endThrew = new AtomicReference<>("");
        final AtomicReference<PoolApi.@Nullable End> end = new AtomicReference<>();
        final AtomicInteger liveThreadsAtEnd = new AtomicInteger(-1);
        final java.util.concurrent.atomic.AtomicBoolean endedAfterTheLastResult = new java.util.concurrent.atomic.AtomicBoolean();
        final @Nullable ServerSocket stalling;
        /** Handlers running now, and the most that ever ran at once (WP-21). */
        final AtomicInteger handlersNow = new AtomicInteger();
        final AtomicInteger mostHandlersAtOnce = new AtomicInteger();
        /** Each item's events so far, as the sink received them (WP-8); confined to the sink's one thread. */
        final Map<Integer, List<String>> eventsOf = new HashMap<>();
        /** The items whose discard, cancellation or permanent failure the sink has received; as {@code eventsOf}. */
        final Set<Integer> settled = new HashSet<>();
        final List<String> outOfOrder = new CopyOnWriteArrayList<>();
        /** Every settlement the settler was given (WP-22), and how many calls it had; written by the settler's one thread. */
        final List<Settlement<Integer>> offered = new CopyOnWriteArrayList<>();
        final AtomicInteger settlerCalls = new AtomicInteger();

        Trial(PoolWorkload w) {
            this.w = w;
            try {
                this.stalling = w.fault() == Fault.HANDLER_SOCKET_IO
                        ? new ServerSocket(0, 50, InetAddress.getLoopbackAddress()) : null;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            WorkerPool.Builder<Integer, Integer> builder = WorkerPool.<Integer, Integer>builder(this::handle)
                    .intake(w.intake()).workers(w.workers()).queueSize(w.queueSize()).itemTimeout(TIMEOUT)
                    .maxRetries(w.maxRetries()).metrics(PoolApi.sink(this::sink));
            PoolApi.settled(builder, this::settle, SETTLE_BATCH);
            if (w.continuing()) {
                PoolApi.continuing(builder);
            }
            if (w.parksRetries()) { // a backoff means something only with retries (WP-16)
                PoolApi.backoff(builder, PoolWorkload.BACKOFF);
            }
            if (w.maxRetries() > 0) { // retryable types mean something only with retries (WP-16)
                builder.retryable(IOException.class);
                if (w.retryTimeouts()) {
                    builder.retryable(java.util.concurrent.TimeoutException.class);
                }
            }
            this.pool = builder.build();
        }

        // ---- the callbacks --------------------------------------------------------------------------

        private void seesTheCaller(String who) {
            if (!CALLER.isBound() || !CALLER.get().equals(tag)) {
                bindingMisses.add(who + " saw " + (CALLER.isBound() ? CALLER.get() : "no binding"));
            }
        }

        @SuppressWarnings("NullAway") // one handler returns null on purpose
        private Integer handle(Integer item) throws Exception {
            mostHandlersAtOnce.accumulateAndGet(handlersNow.incrementAndGet(), Math::max);
            try {
                return handleCounted(item);
            } finally {
                handlersNow.decrementAndGet();
            }
        }

        @SuppressWarnings({"preview", "NullAway"}) // a handler forks with StructuredTaskScope; one returns null on purpose
        private Integer handleCounted(Integer item) throws Exception {
            int attempt = attempts.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
            ItemContext<?> context = ItemContext.current();
            if (!context.item().equals(item) || context.attempt() != attempt || LOCAL.get() != null) {
                crossings.add("item " + item + " attempt " + attempt + " saw " + context + " and local " + LOCAL.get());
            }
            LOCAL.set(item);
            seesTheCaller("the handler of item " + item);
            if (!w.isFaulty(item)) {
                return item;
            }
            switch (w.fault()) {
                case HANDLER_RETRYABLE -> {
                    if (attempt <= 2) {
                        throw new IOException("transient, attempt " + attempt);
                    }
                }
                case HANDLER_PERMANENT -> throw new IllegalStateException("permanent " + item);
                case HANDLER_RETURNS_NULL -> {
                    return null;
                }
                case HANDLER_OUTLIVES_TIMEOUT -> {
                    if (!new CountDownLatch(1).await(RUN_BOUND.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("an attempt was never interrupted");
                    }
                }
                case HANDLER_SWALLOWS_1 -> swallow(1);
                case HANDLER_SWALLOWS_2 -> swallow(2);
                case HANDLER_SWALLOWS_3 -> swallow(3);
                case HANDLER_SOCKET_IO -> {
                    ServerSocket server = java.util.Objects.requireNonNull(stalling);
                    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                        return socket.getInputStream().read(); // blocks: the server never writes
                    }
                }
                case HANDLER_FORKS_SUBTASKS -> {
                    try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
                        for (int i = 0; i < 2; i++) {
                            scope.fork(() -> {
                                if (!ItemContext.current().item().equals(item)) {
                                    crossings.add("a subtask of item " + item + " saw " + ItemContext.current());
                                }
                                seesTheCaller("a subtask of item " + item);
                                return null;
                            });
                        }
                        scope.join();
                    }
                }
                case HANDLER_LEAKS_A_THREAD -> leaked.add(Thread.ofVirtual().name("leaked-by-a-handler").start(() -> {
                    try {
                        releaseLeaks.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
                default -> { }
            }
            return item;
        }

        /** Swallows {@code rounds} interrupts; gives up on the next one, or, after the third, returns on its own. */
        private static void swallow(int rounds) throws InterruptedException {
            for (int swallowed = 0; ; ) {
                try {
                    long wait = swallowed < 3 ? RUN_BOUND.toNanos() : TIMEOUT.multipliedBy(3).toNanos();
                    if (!new CountDownLatch(1).await(wait, TimeUnit.NANOSECONDS)) {
                        return; // stuck through every round: reported as such, and now returns late
                    }
                } catch (InterruptedException e) {
                    if (++swallowed > rounds) {
                        throw e;
                    }
                }
            }
        }

        /** The store: keeps what it is given; under a settler fault, one call (the first to the third) fails. */
        private void settle(List<Settlement<Integer>> batch) throws Exception {
            seesTheCaller("the settler");
            offered.addAll(batch);
            int call = settlerCalls.incrementAndGet();
            if (call == w.faultAt() % 3 + 1) {
                switch (w.fault()) {
                    case SETTLER_THROWS -> throw new IOException("the store refused batch " + call);
                    case SETTLER_THROWS_FATAL -> throw new InternalError("the store's fatal error, on batch " + call);
                    default -> { }
                }
            }
        }

        private void sink(String event, String detail) throws Exception {
            seesTheCaller("the sink, on " + event);
            inOrder(event, detail);
            switch (w.fault()) {
                case SINK_THROWS_RUNTIME_EXCEPTION -> throw new IllegalStateException("the sink fails on " + event);
                case SINK_THROWS_INTERRUPTED -> throw new InterruptedException("the sink's own, on " + event);
                case SINK_THROWS_ERROR -> throw new AssertionError("the sink's bug, on " + event);
                default -> { }
            }
        }

        /**
         * Checks that {@code event} comes in its place among its item's events: after the item's
         * {@code item.accepted}, and before nothing that settled it (a discard, a cancellation, a
         * permanent failure; a success settles only as the last attempt, so it is not checked here),
         * but for {@code attempt.stuck}, which follows the failure of its item.
         */
        private void inOrder(String event, String detail) {
            if (!detail.startsWith("item=")) {
                return; // a run's event, not an item's
            }
            int end = detail.indexOf(' ');
            Integer item = Integer.valueOf(detail.substring("item=".length(), end < 0 ? detail.length() : end));
            List<String> before = eventsOf.computeIfAbsent(item, k -> new ArrayList<>());
            if (before.isEmpty() && !event.equals("item.accepted")) {
                outOfOrder.add("item " + item + ": " + event + " before item.accepted");
            } else if (!before.isEmpty() && event.equals("item.accepted")) {
                outOfOrder.add("item " + item + ": item.accepted after " + before);
            } else if (settled.contains(item) && !event.equals("attempt.stuck")) { // stuck follows its item's failure (WP-4)
                outOfOrder.add("item " + item + ": " + event + " after it was settled, in " + before);
            }
            before.add(event);
            if (event.equals("item.discarded") || event.equals("item.failed")
                    || event.equals("attempt.cancelled")) {
                settled.add(item);
            }
        }

        private Stream<Integer> source() {
            Iterator<Integer> items = new Iterator<>() {
                int next;

                @Override
                public boolean hasNext() {
                    if (w.fault() == Fault.SOURCE_HAS_NEXT_THROWS && next < w.items() && w.isFaulty(next)) {
                        throw new IllegalStateException("hasNext broke at " + next);
                    }
                    return next < w.items();
                }

                @Override
                public Integer next() {
                    if (w.fault() == Fault.SOURCE_NEXT_THROWS && w.isFaulty(next)) {
                        throw new IllegalStateException("next broke at " + next);
                    }
                    return next++;
                }
            };
            return StreamSupport.stream(Spliterators.spliteratorUnknownSize(items, Spliterator.ORDERED), false)
                    .onClose(() -> {
                        sourceCloses.incrementAndGet();
                        if (w.fault() == Fault.SOURCE_CLOSE_THROWS) {
                            throw new IllegalStateException("close broke");
                        }
                    });
        }

        // ---- the consumer ---------------------------------------------------------------------------

        /** The owner thread: runs the pool within the caller's binding, consumes, ends as asked. */
        void consume() {
            try {
                consumeWithin();
            } catch (RuntimeException | Error e) { // reported, not printed by the thread's uncaught handler
                endThrew.set("the owner threw " + e);
            }
        }

        private void consumeWithin() {
            ScopedValue.where(CALLER, tag).run(() -> {
                var run = pool.run(source());
                try (run) {
                    boolean endingDone = w.ending() == Ending.NATURALLY;
                    boolean stop = false;
                    if (!endingDone && w.endAfter() == 0) {
                        endingDone = true;
                        stop = endNow(run);
                    }
                    while (!stop) {
                        boolean more;
                        try {
                            more = run.hasNext();
                        } catch (RuntimeException | Error e) {
                            endThrew.set(e.getClass().getSimpleName());
                            if (!endingDone) { // the run ended before the ending's moment: it comes now
                                endingDone = true;
                                endedAfterTheLastResult.set(true);
                                endNow(run);
                            }
                            break;
                        }
                        if (!more && !endingDone) { // fewer results than endAfter: the ending comes at the very end
                            endingDone = true;
                            endedAfterTheLastResult.set(true);
                            if (endNow(run)) {
                                break;
                            }
                            continue;
                        }
                        if (!more) {
                            break;
                        }
                        results.add(run.next());
                        if (!endingDone && results.size() == w.endAfter()) {
                            endingDone = true;
                            if (endNow(run)) {
                                break;
                            }
                        }
                    }
                    liveThreadsAtEnd.set(pool.liveThreads());
                } finally {
                    Thread.interrupted(); // the INTERRUPT ending leaves it set, as it should; this run is over
                }
                end.set(PoolApi.end(run));
            });
        }

        /** Ends the run as the workload asks; {@return whether the consumer stops iterating} */
        private boolean endNow(AutoCloseable run) {
            switch (w.ending()) {
                case STOP -> onAnotherThread(pool::requestStop);
                case STOP_WITH_DEADLINE -> onAnotherThread(() -> PoolApi.stopWithin(pool, w.stopDeadline()));
                case ABORT -> onAnotherThread(pool::abort);
                case CLOSE -> {
                    closeQuietly(run);
                    return true;
                }
                case INTERRUPT -> Thread.currentThread().interrupt();
                case WRONG_THREAD -> onAnotherThread(() -> {
                    wrongThreadCalls.add("close(): " + outcomeOf(() -> closeQuietly(run)));
                    if (run instanceof Iterator<?> iterator) {
                        wrongThreadCalls.add("hasNext(): " + outcomeOf(() -> {
                            if (iterator.hasNext()) {
                                throw new AssertionError("another thread took a result");
                            }
                        }));
                    }
                });
                case NATURALLY -> { }
            }
            return false;
        }

        private static void closeQuietly(AutoCloseable run) {
            try {
                run.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        private static String outcomeOf(Runnable call) {
            try {
                call.run();
                return "returned";
            } catch (RuntimeException | Error e) {
                return e.getClass().getSimpleName();
            }
        }

        private static void onAnotherThread(Runnable call) {
            Thread other = Thread.ofVirtual().start(call);
            try {
                if (!other.join(Bounds.WAIT)) {
                    throw new AssertionError("a call from another thread did not return: " + other);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for another thread's call", e);
            }
        }

        // ---- the record -------------------------------------------------------------------------------

        Observed observed(Duration took, boolean hung, int newThreadsAlive) {
            PoolApi.End ended = end.get();
            if (ended == null) {
                ended = new PoolApi.End(hung ? "HUNG" : "NO END (the owner threw: see the other properties)",
                        List.of(), List.of(), List.of(), -1, 0, 0, 0, 0, 0, -1, -1, List.of(), false);
            }
            return new Observed(ended, new ArrayList<>(results), endThrew.get(), took, hung, liveThreadsAtEnd.get(),
                    newThreadsAlive, leaked.size(), List.copyOf(crossings), List.copyOf(bindingMisses),
                    sourceCloses.get(), List.copyOf(wrongThreadCalls), ended.maxLead() >= w.leadBound(),
                    endedAfterTheLastResult.get(), mostHandlersAtOnce.get(), List.copyOf(outOfOrder),
                    List.copyOf(offered), settlerCalls.get());
        }

        void releaseLeaks() {
            releaseLeaks.countDown();
            for (Thread thread : leaked) {
                joined(thread, Bounds.WAIT);
            }
            if (stalling != null) {
                try {
                    stalling.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }
}
