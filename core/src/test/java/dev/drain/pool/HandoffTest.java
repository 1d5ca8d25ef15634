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
}
