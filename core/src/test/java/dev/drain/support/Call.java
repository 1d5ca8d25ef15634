package dev.drain.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One call running on its own thread, started by a {@link Spawner}: the thread, and how the call
 * ended. Assertions about the call are made on the test's thread, after the call has ended, so a
 * failure always fails the test.
 *
 * @param <V> the type of the call's result
 */
public final class Call<V> {
    /** A call to run on another thread; may throw anything. */
    @FunctionalInterface
    public interface Body<V> {
        @Nullable V run() throws Exception;
    }

    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile @Nullable Outcome<V> outcome;
    private volatile boolean interruptedAtEnd;
    private final Thread thread;

    Call(ThreadKind kind, String name, Body<V> body) {
        this.thread = kind.start(name, () -> {
            try {
                outcome = new Outcome.Returned<>(body.run());
            } catch (Throwable t) {
                outcome = new Outcome.Threw<>(t);
            } finally {
                interruptedAtEnd = Thread.currentThread().isInterrupted();
                ended.countDown();
            }
        });
    }

    /** {@return the thread the call runs on} */
    public Thread thread() {
        return thread;
    }

    /** {@return whether the call has ended} */
    public boolean isDone() {
        return ended.getCount() == 0;
    }

    /** Waits (bounded) for the call to end and its thread to terminate, and returns how it ended. */
    public Outcome<V> outcome() {
        try {
            if (!ended.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)
                    || !thread.join(Bounds.WAIT)) {
                throw new AssertionError(thread.getName() + " did not end within " + Bounds.WAIT
                        + "; it is " + thread.getState());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("test thread interrupted while waiting for " + thread.getName(), e);
        }
        return Objects.requireNonNull(outcome, "outcome is set before the latch opens");
    }

    /** Waits for the call to end and returns its result; fails the test if it threw. */
    public @Nullable V value() {
        return switch (outcome()) {
            case Outcome.Returned<V> r -> r.value();
            case Outcome.Threw<V> t -> throw new AssertionError(
                    thread.getName() + " threw instead of returning", t.error());
        };
    }

    /** Waits for the call to end; fails the test unless it threw a {@code type}, which it returns. */
    public <X extends Throwable> X thrown(Class<X> type) {
        return switch (outcome()) {
            case Outcome.Returned<V> r -> throw new AssertionError(
                    thread.getName() + " returned " + r.value() + " instead of throwing " + type.getSimpleName());
            case Outcome.Threw<V> t -> {
                assertThat(t.error()).as("what %s threw", thread.getName()).isInstanceOf(type);
                yield type.cast(t.error());
            }
        };
    }

    /** Waits for the call to end; {@return whether its thread's interrupt status was set when it ended} */
    public boolean interruptStatusAtEnd() {
        outcome();
        return interruptedAtEnd;
    }
}
