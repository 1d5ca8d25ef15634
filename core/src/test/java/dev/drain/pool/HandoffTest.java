package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Decision 0052: the {@link Handoff}'s places kept by {@code reserve} across its death and its
 * close. A place kept and never taken must not hold the last wait ({@code awaitAnswered}, the
 * run's end) or the delivering thread. These are the hand-off's own promises, beneath WP-22's
 * backlog and WP-10's "no thread is left".
 */
class HandoffTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** A receiver that fails the delivering thread on its first batch, as an OutOfMemoryError in that thread would. */
    private static final class DyingReceiver implements Handoff.Receiver<String> {
        final List<String> lost = new CopyOnWriteArrayList<>();

        @Override
        public CompletionStage<?> deliver(List<String> batch) {
            throw new OutOfMemoryError("the delivering thread's own, simulated");
        }

        @Override
        public void answered(List<String> batch, @Nullable Throwable cause) { }

        @Override
        public void lost(List<String> batch, Throwable cause) {
            lost.addAll(batch);
        }
    }

    /**
     * Decision 0052, Handoff's contract ("if the delivering thread itself fails, the hand-off is
     * dead: what it held is lost, later offers are refused, and nobody waits for it any more"):
     * two workers keep a place each ({@code reserve}); the first offer takes one, and the
     * delivering thread dies on it. The last wait ({@code awaitAnswered}; for the settler,
     * {@code Settling.finish}, the run's end) waits for the place still kept, and returns as soon
     * as the second worker's offer is refused and gives that place back.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aPlaceKeptWhenTheDeliveringThreadDiesIsGivenBackByItsRefusedOffer(ThreadKind kind) {
        Handoff<String> handoff = deadWithAPlaceKept(kind);
        Call<Void> driver = spawn.use(kind).run("driver", handoff::awaitAnswered);
        Waits.untilParked(driver.thread());
        assertThat(driver.isDone()).as("the last wait, with a place still kept").isFalse();
        assertThat(handoff.offer("kept")).as("an offer after the death").isFalse();
        driver.value(); // woken by the place given back
    }

    /** The same, but the place still kept when the hand-off dies is given back by its close. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aPlaceKeptWhenTheDeliveringThreadDiesIsGivenBackByTheClose(ThreadKind kind) {
        Handoff<String> handoff = deadWithAPlaceKept(kind);
        Call<Void> driver = spawn.use(kind).run("driver", handoff::awaitAnswered);
        Waits.untilParked(driver.thread());
        handoff.close(); // gives the kept place back
        driver.value();
        assertThat(handoff.offer("kept")).as("an offer after the close").isFalse();
    }

    /**
     * {@return a hand-off whose delivering thread (of {@code kind}) died on its first batch, with one
     * of the two places kept before it still kept} The first offer takes the other; it is lost.
     */
    private Handoff<String> deadWithAPlaceKept(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 1, 4);
        DyingReceiver receiver = new DyingReceiver();
        assertThat(handoff.reserve()).as("a place kept, with room").isTrue();
        assertThat(handoff.reserve()).as("a second place kept, with room").isTrue();
        Call<Void> delivering = spawn.use(kind).run("delivering", () -> handoff.deliver(receiver));
        assertThat(handoff.offer("first")).isTrue(); // takes one of the two places
        delivering.value(); // it died on "first"
        assertThat(receiver.lost).containsExactly("first");
        return handoff;
    }

    /** A receiver that answers nothing until the test completes the stage it kept. */
    private static final class HoldingReceiver implements Handoff.Receiver<String> {
        final CompletableFuture<@Nullable Void> stage = new CompletableFuture<>();
        final CountDownLatch delivered = new CountDownLatch(1);
        final CountDownLatch answered = new CountDownLatch(1);

        @Override
        public CompletionStage<?> deliver(List<String> batch) {
            delivered.countDown();
            return stage;
        }

        @Override
        public void answered(List<String> batch, @Nullable Throwable cause) {
            answered.countDown();
        }

        @Override
        public void lost(List<String> batch, Throwable cause) { }
    }

    /**
     * Decision 0052, Handoff's contract ({@code close}: "the delivering thread ends once everything
     * held is answered"): once closed, {@code reserve} keeps no place (no offer would take it), so
     * the delivering thread ends as soon as the batch still in flight is answered.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aClosedHandoffKeepsNoPlaceAndItsDeliveringThreadEnds(ThreadKind kind) throws InterruptedException {
        Handoff<String> handoff = new Handoff<>(1, 1, 4);
        HoldingReceiver receiver = new HoldingReceiver();
        Call<Void> delivering = spawn.use(kind).run("delivering", () -> handoff.deliver(receiver));
        assertThat(handoff.offer("in flight")).isTrue();
        assertThat(receiver.delivered.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue();
        handoff.close();
        assertThat(handoff.reserve()).as("a place kept after the close (there is room: 1 held, room 4)").isFalse();
        receiver.stage.complete(null); // the batch in flight is answered: nothing is held
        delivering.value();
        assertThat(receiver.answered.getCount()).isZero();
        assertThat(handoff.offer("too late")).as("an offer after the close").isFalse();
    }

    /** A receiver that records every batch it is given and every answer, and answers a batch only when the test completes its stage. */
    private static final class PendingReceiver implements Handoff.Receiver<String> {
        final List<List<String>> delivered = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<@Nullable Void>> stages = new CopyOnWriteArrayList<>();
        final List<List<String>> answered = new CopyOnWriteArrayList<>();

        @Override
        public CompletionStage<?> deliver(List<String> batch) {
            CompletableFuture<@Nullable Void> stage = new CompletableFuture<>();
            delivered.add(List.copyOf(batch));
            stages.add(stage);
            return stage;
        }

        @Override
        public void answered(List<String> batch, @Nullable Throwable cause) {
            answered.add(List.copyOf(batch));
        }

        @Override
        public void lost(List<String> batch, Throwable cause) { }
    }

    /** Closes {@code handoff}, answers every batch still pending, and waits for its delivering thread to end. */
    private static void finish(Handoff<String> handoff, PendingReceiver receiver, Call<Void> delivering) {
        handoff.close();
        receiver.stages.forEach(stage -> stage.complete(null));
        delivering.value();
    }

    /**
     * Handoff's contract ("a batch is answered when the receiver's stage completes", whatever
     * thread completes it): a stage completed by another thread while the delivering thread
     * waits wakes it, and the answer reaches the receiver at once, with no later offer to wake it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBatchAnsweredOnAnotherThreadIsReportedAtOnce(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 1, 4);
        PendingReceiver receiver = new PendingReceiver();
        Call<Void> delivering = spawn.use(kind).run("delivering", () -> handoff.deliver(receiver));
        assertThat(handoff.offer("a")).isTrue();
        Waits.until("the batch delivered", () -> receiver.delivered.size() == 1);
        Waits.untilParked(delivering.thread()); // waiting for the answer
        receiver.stages.getFirst().complete(null); // on this thread, not the delivering one
        Waits.until("the answer reported to the receiver", () -> receiver.answered.size() == 1);
        finish(handoff, receiver, delivering);
    }

    /**
     * Handoff's contract ("keeps at most {@code batchesInFlight} batches unanswered"): with two
     * in flight, a third offered element waits in the queue until one of them is answered.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void noMoreBatchesThanAllowedAreInFlight(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 2, 10);
        PendingReceiver receiver = new PendingReceiver();
        Call<Void> delivering = spawn.use(kind).run("delivering", () -> handoff.deliver(receiver));
        for (String element : List.of("a", "b", "c")) {
            assertThat(handoff.offer(element)).isTrue();
        }
        Waits.until("two batches delivered", () -> receiver.delivered.size() == 2);
        Waits.untilParked(delivering.thread()); // nothing more it may do
        assertThat(receiver.delivered).as("the batches in flight").containsExactly(List.of("a"), List.of("b"));
        receiver.stages.getFirst().complete(null);
        Waits.until("the third delivered once the first is answered", () -> receiver.delivered.size() == 3);
        assertThat(receiver.delivered.get(2)).containsExactly("c");
        finish(handoff, receiver, delivering);
    }

    /**
     * Handoff's contract ("reports the answers to it in the order the batches were delivered,
     * whatever order their stages complete in"): the second batch answered first is reported
     * only after the first.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void answersAreReportedInTheOrderTheBatchesWereDelivered(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 2, 10);
        PendingReceiver receiver = new PendingReceiver();
        Call<Void> delivering = spawn.use(kind).run("delivering", () -> handoff.deliver(receiver));
        assertThat(handoff.offer("a")).isTrue();
        assertThat(handoff.offer("b")).isTrue();
        Waits.until("both batches delivered", () -> receiver.delivered.size() == 2);
        receiver.stages.get(1).complete(null);
        Waits.untilParked(delivering.thread());
        assertThat(receiver.answered).as("answers reported while the first batch is unanswered").isEmpty();
        receiver.stages.get(0).complete(null);
        Waits.until("both answers reported", () -> receiver.answered.size() == 2);
        assertThat(receiver.answered).containsExactly(List.of("a"), List.of("b"));
        finish(handoff, receiver, delivering);
    }

    /**
     * Handoff's contract (a room of 0 is allowed: {@code reserve} returns "while more than
     * {@code room} elements are held"): with no room, a place is kept at once while nothing is
     * held, and the next reserve waits until the hand-off closes, which gives it up.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aHandoffWithNoRoomKeepsAPlaceOnlyWhileNothingIsHeld(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 1, 0);
        assertThat(handoff.reserve()).as("a place kept with nothing held").isTrue();
        Call<Boolean> second = spawn.use(kind).call("second", handoff::reserve);
        Waits.untilParked(second.thread());
        handoff.close();
        assertThat(second.value()).as("the second place, once closed").isFalse();
    }

    /**
     * Decision 0052: a refused offer gives back one kept place, not more: two refused offers
     * after the death, with one place kept, leave nothing held, so the last wait returns.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void refusedOffersGiveBackOnlyThePlacesKept(ThreadKind kind) {
        Handoff<String> handoff = deadWithAPlaceKept(kind);
        assertThat(handoff.offer("kept")).as("the offer that had kept a place").isFalse();
        assertThat(handoff.offer("unkept")).as("an offer with no place kept").isFalse();
        spawn.use(kind).run("driver", handoff::awaitAnswered).value();
    }

    /**
     * Handoff's contract ("if the delivering thread itself fails ... nobody waits for it any
     * more"): a thread already waiting for the last answer when the delivering thread dies is
     * woken, and the element is lost, not answered.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theDeathOfTheDeliveringThreadWakesTheLastWait(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(1, 1, 4);
        DyingReceiver receiver = new DyingReceiver();
        assertThat(handoff.offer("a")).isTrue();
        Call<Void> driver = spawn.use(kind).run("driver", handoff::awaitAnswered);
        Waits.untilParked(driver.thread());
        spawn.use(kind).run("delivering", () -> handoff.deliver(receiver)).value();
        driver.value();
        assertThat(receiver.lost).containsExactly("a");
    }

    /**
     * Handoff's contract ({@code takeQueued}: "the delivering thread never ran: everything queued,
     * taken out, no longer held"): in order, once, and the last wait then returns.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void whatWasNeverDeliveredIsTakenOutOnceAndNoLongerHeld(ThreadKind kind) {
        Handoff<String> handoff = new Handoff<>(4, 1, 10);
        assertThat(handoff.offer("a")).isTrue();
        assertThat(handoff.offer("b")).isTrue();
        Call<Void> driver = spawn.use(kind).run("driver", handoff::awaitAnswered);
        Waits.untilParked(driver.thread());
        handoff.close();
        assertThat(handoff.takeQueued()).containsExactly("a", "b");
        driver.value();
        assertThat(handoff.takeQueued()).as("taken a second time").isEmpty();
    }
}
