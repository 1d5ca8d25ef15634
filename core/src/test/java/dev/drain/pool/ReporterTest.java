package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-8: the {@link Reporter} on its own, between the threads that record events and the one that
 * delivers them to the sink: the order, the backlog that holds recording threads back, what a
 * shutdown and a cancellation release, and the flush. The reporter and the recording threads are
 * of either kind; the sink is a test's, which blocks when told to.
 */
class ReporterTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** What the sink received, as "event detail". */
    private final List<String> received = new CopyOnWriteArrayList<>();
    /** Open: the sink returns at once; closed, it waits (bounded) until the test opens it. */
    private volatile CountDownLatch sinkOpen = new CountDownLatch(0);
    private final CountDownLatch sinkEntered = new CountDownLatch(1);
    private final Reporter reporter = new Reporter((event, detail) -> {
        sinkEntered.countDown();
        if (!sinkOpen.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new AssertionError("the sink was never opened");
        }
        received.add(event.name() + " " + detail);
    });

    /** What the reporter passed on as fatal: nothing, in these tests. */
    private final List<Throwable> fatal = new CopyOnWriteArrayList<>();

    private Call<Void> delivering(ThreadKind kind) {
        return spawn.use(kind).run("reporter-under-test", () -> reporter.deliver(fatal::add));
    }

    /** Blocks the sink on its next event, records one event and waits until the sink holds it. */
    private void blockTheSink() throws InterruptedException {
        sinkOpen = new CountDownLatch(1);
        reporter.record(MetricsEvent.ITEM_ACCEPTED, () -> "held");
        assertThat(sinkEntered.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the sink got the first event").isTrue();
    }

    /** Records events until {@link Reporter#BACKLOG} are undelivered (the one the blocked sink holds included). */
    private void fillTheBacklog() {
        for (int i = 1; i < Reporter.BACKLOG; i++) {
            int n = i;
            reporter.record(MetricsEvent.ITEM_ACCEPTED, () -> "event " + n);
        }
    }

    /** Waits until {@code thread} waits on a condition: a recording thread waiting for room. */
    private static void awaitWaitingForRoom(Thread thread) {
        Waits.until(thread.getName() + " waits for room", () ->
                LockSupport.getBlocker(thread) instanceof AbstractQueuedSynchronizer.ConditionObject);
    }

    private void endDelivery(Call<Void> deliverer) {
        sinkOpen.countDown();
        reporter.shutdown();
        deliverer.value();
    }

    /** WP-8: every event reaches the sink once, in the order it was recorded, and the reporter ends once shut down with its backlog delivered. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void eventsReachTheSinkInOrderOnce(ThreadKind kind) {
        Call<Void> deliverer = delivering(kind);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 3 * Reporter.BACKLOG; i++) {
            int n = i;
            MetricsEvent event = n % 2 == 0 ? MetricsEvent.ITEM_ACCEPTED : MetricsEvent.ATTEMPT_STARTED;
            if (n % 3 == 0) {
                reporter.recordNow(event, () -> "event " + n);
            } else {
                reporter.record(event, () -> "event " + n);
            }
            expected.add(event.name() + " event " + n);
        }
        endDelivery(deliverer);
        assertThat(received).containsExactlyElementsOf(expected);
    }

    /** WP-8: with {@value Reporter#BACKLOG} events undelivered, a recording thread waits for room, and goes on once the sink takes the backlog. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFullBacklogHoldsTheRecorderUntilTheSinkCatchesUp(ThreadKind kind) throws InterruptedException {
        Call<Void> deliverer = delivering(kind);
        blockTheSink();
        fillTheBacklog();
        Call<Void> recorder = spawn.use(kind).run("recorder", () -> reporter.record(MetricsEvent.ATTEMPT_STARTED, () -> "one too many"));
        awaitWaitingForRoom(recorder.thread());
        assertThat(recorder.isDone()).isFalse();
        reporter.recordNow(MetricsEvent.POOL_ABORT, () -> "never waits"); // recordNow ignores the backlog
        sinkOpen.countDown();
        recorder.value();
        endDelivery(deliverer);
        assertThat(received).hasSize(Reporter.BACKLOG + 2).endsWith("ATTEMPT_STARTED one too many");
    }

    /** WP-8: a shutdown releases a thread waiting for room while the sink is still blocked, and its event is dropped. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aShutdownReleasesARecorderWaitingForRoom(ThreadKind kind) throws InterruptedException {
        Call<Void> deliverer = delivering(kind);
        blockTheSink();
        fillTheBacklog();
        Call<Void> recorder = spawn.use(kind).run("recorder", () -> reporter.record(MetricsEvent.ATTEMPT_STARTED, () -> "dropped"));
        awaitWaitingForRoom(recorder.thread());
        reporter.shutdown();
        recorder.value(); // returns while the sink still holds the first event
        assertThat(received).isEmpty();
        endDelivery(deliverer);
        assertThat(received).hasSize(Reporter.BACKLOG).doesNotContain("ATTEMPT_STARTED dropped");
    }

    /**
     * WP-8: a thread waiting for room gives up once its run is being cancelled (the run releases
     * the reporter's waiters), and its event is dropped; an interrupt alone does not release it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCancelledRunsRecorderGivesUp(ThreadKind kind) throws InterruptedException {
        Call<Void> deliverer = delivering(kind);
        blockTheSink();
        fillTheBacklog();
        Call<Void> recorder = spawn.use(kind).run("recorder", () -> reporter.record(MetricsEvent.ATTEMPT_STARTED, () -> "dropped"));
        awaitWaitingForRoom(recorder.thread());
        Thread waiting = recorder.thread();
        waiting.interrupt(); // a stray interrupt: the run goes on
        Waits.until("the recorder has taken the interrupt", () -> recorder.isDone()
                || (!waiting.isInterrupted() && LockSupport.getBlocker(waiting) instanceof AbstractQueuedSynchronizer.ConditionObject));
        assertThat(recorder.isDone()).as("released by a stray interrupt").isFalse();
        reporter.releaseWaiters();
        recorder.value();
        reporter.recordNow(MetricsEvent.POOL_ABORT, () -> "discarded=0"); // a cancelled run's events still come
        endDelivery(deliverer);
        assertThat(received).doesNotContain("ATTEMPT_STARTED dropped").contains("POOL_ABORT discarded=0");
        assertThat(fatal).isEmpty();
    }

    /** WP-8: a flush returns only once every event recorded before it has reached the sink. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFlushWaitsForEveryEarlierEvent(ThreadKind kind) throws InterruptedException {
        Call<Void> deliverer = delivering(kind);
        blockTheSink();
        reporter.record(MetricsEvent.ATTEMPT_STARTED, () -> "before the flush");
        Call<Void> flusher = spawn.use(kind).run("flusher", reporter::flush);
        Waits.untilParked(flusher.thread());
        assertThat(flusher.isDone()).isFalse();
        sinkOpen.countDown();
        flusher.value();
        assertThat(received).containsExactly("ITEM_ACCEPTED held", "ATTEMPT_STARTED before the flush");
        endDelivery(deliverer);
    }

    /** WP-8: a flush ignores an interrupt while it waits, and keeps it: it returns once the earlier events are delivered, with the interrupt set. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFlushKeepsAnInterrupt(ThreadKind kind) throws InterruptedException {
        Call<Void> deliverer = delivering(kind);
        blockTheSink();
        Call<Boolean> flusher = spawn.use(kind).call("flusher", () -> {
            reporter.flush();
            return Thread.currentThread().isInterrupted();
        });
        Waits.untilParked(flusher.thread());
        flusher.thread().interrupt();
        Waits.until("the flusher has taken the interrupt", () -> !flusher.thread().isInterrupted());
        Waits.untilParked(flusher.thread());
        assertThat(flusher.isDone()).as("the flush waits on").isFalse();
        sinkOpen.countDown();
        assertThat(flusher.value()).as("interrupted on return").isTrue();
        assertThat(received).containsExactly("ITEM_ACCEPTED held");
        endDelivery(deliverer);
    }

    /** WP-8: once the reporter has shut down, a new event is dropped and a flush returns at once. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void afterTheShutdownEventsAreDropped(ThreadKind kind) {
        Call<Void> deliverer = delivering(kind);
        reporter.record(MetricsEvent.ITEM_ACCEPTED, () -> "before");
        reporter.shutdown();
        deliverer.value();
        reporter.record(MetricsEvent.ITEM_ACCEPTED, () -> "after");
        reporter.recordNow(MetricsEvent.POOL_ABORT, () -> "after");
        reporter.flush();
        assertThat(received).containsExactly("ITEM_ACCEPTED before");
    }
}
