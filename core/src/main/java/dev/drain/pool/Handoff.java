package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Uninterruptibly;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A one-way hand-off of elements, in batches, from the run's threads to one thread that gives them
 * to user code: the metrics sink's ({@link Reporter}) and the settler's ({@link Settling}). Any
 * thread offers; one <em>delivering</em> thread takes what is offered, in order, and hands it to a
 * {@link Receiver}; a batch is <em>answered</em> when the receiver's stage completes.
 *
 * <ul>
 *   <li>{@link #offer} never waits: what a thread offers is queued at once. An element is
 *       <em>held</em> from its offer until its batch is answered.</li>
 *   <li>The back-pressure is a step of its own. {@link #reserve} waits while more than
 *       {@code room} elements are held, then keeps a place for the caller's next offer, held from
 *       then on, so that waiting and offering need not be one call under one lock and the bound is
 *       still exact; {@link #awaitRoom} only waits (after an offer that could not wait). Either
 *       wait ends once there is room, and for good once {@link #releaseWaiters} or {@link #close}
 *       was called; an interrupt only wakes it to look again (the run's threads decide by the
 *       run's phase, decision 0015).</li>
 *   <li>The delivering thread takes at most {@code batchLimit} elements at a time and keeps at most
 *       {@code batchesInFlight} batches unanswered; it calls the receiver outside the lock, and
 *       reports the answers to it in the order the batches were delivered, whatever order their
 *       stages complete in.</li>
 *   <li>{@link #close} (nothing more is offered) lets the delivering thread end once every held
 *       element has been answered; {@link #awaitAnswered} waits for that.</li>
 *   <li>If the delivering thread itself fails (a bug in drain, the JVM out of memory), the hand-off
 *       is <em>dead</em>: what it held is {@linkplain Receiver#lost lost}, later offers are refused,
 *       and nobody waits for it any more (a place kept and not taken yet is given back by the
 *       refused offer, or by {@link #close}).</li>
 * </ul>
 * It never refers to the run: what a failure means to the run is the receiver's business, and the
 * receiver gets whatever it needs from the thread that starts {@link #deliver}.
 *
 * @param <E> the element type
 */
final class Handoff<E> {

    /** What the delivering thread does with the batches; every method is called on that thread and must not throw. */
    interface Receiver<E> {
        /**
         * Hands {@code batch} to user code; {@return a stage that completes once it is answered,
         * exceptionally if it was not taken} A synchronous receiver returns a completed stage.
         */
        CompletionStage<?> deliver(List<E> batch);

        /** {@code batch} was answered: taken, or not ({@code cause}). Called in delivery order. */
        void answered(List<E> batch, @Nullable Throwable cause);

        /** {@code batch} will never be answered: the delivering thread failed with {@code cause}, or never ran. */
        void lost(List<E> batch, Throwable cause);
    }

    /** One delivered batch, waiting for its answer; the answer is written by whatever thread completes the stage. */
    private static final class InFlight<E> {
        final List<E> batch;
        /** Set once, under the hand-off's lock. */
        boolean answered;
        @Nullable Throwable cause;

        InFlight(List<E> batch) {
            this.batch = batch;
        }
    }

    private final int batchLimit;
    private final int batchesInFlight;
    private final int room;

    private final ReentrantLock lock = new ReentrantLock();
    /**
     * Signalled when an element is offered, a batch is answered, the hand-off is closed: the
     * delivering thread waits on it for any of them.
     */
    private final Condition workOrAnswer = lock.newCondition();
    /**
     * Signalled when held elements are answered, waiters are released, the hand-off closes or
     * dies: threads waiting for room and for the last answer wait on it, for different things, so
     * it is signalled to all.
     */
    private final Condition answeredOrReleased = lock.newCondition();
    /** Offered and not yet taken by the delivering thread, in order. */
    @GuardedBy("lock")
    private final ArrayDeque<E> queued = new ArrayDeque<>();
    /** Delivered and not yet reported to the receiver as answered, in delivery order. */
    @GuardedBy("lock")
    private final ArrayDeque<InFlight<E>> inFlight = new ArrayDeque<>();
    /** Offered and not yet answered (queued, or in a batch in flight), and the places reserved. */
    @GuardedBy("lock")
    private int held;
    /** Places {@link #reserve} kept and no offer has taken yet; counted in {@link #held}. */
    @GuardedBy("lock")
    private int reserved;
    /** Set by {@link #releaseWaiters}: nobody waits for room any more. */
    @GuardedBy("lock")
    private boolean released;
    /** Set by {@link #close}: nothing more is accepted, and the delivering thread ends once nothing is held. */
    @GuardedBy("lock")
    private boolean closed;
    /** Why the delivering thread failed, once it has: from then on nothing is accepted and nobody waits. */
    @GuardedBy("lock")
    private @Nullable Throwable dead;

    /**
     * @param batchLimit the most elements per batch
     * @param batchesInFlight the most batches delivered and not yet answered
     * @param room how many held elements let {@link #reserve} and {@link #awaitRoom} return
     */
    Handoff(int batchLimit, int batchesInFlight, int room) {
        if (batchLimit < 1 || batchesInFlight < 1 || room < 0) {
            throw new IllegalArgumentException("unreachable: a hand-off of batches of " + batchLimit + ", "
                    + batchesInFlight + " in flight, room " + room);
        }
        this.batchLimit = batchLimit;
        this.batchesInFlight = batchesInFlight;
        this.room = room;
    }

    /**
     * Queues {@code element} in a place a {@link #reserve} kept, if there is one, or in a new one;
     * never waits. {@return whether it was accepted: not once closed or dead} Any thread. (The
     * places are counted, not owned: which offer takes which reserved place changes no count.)
     */
    boolean offer(E element) {
        lock.lock();
        try {
            if (closed || dead != null) {
                if (reserved > 0) { // the place is given back: the last waits may now be over
                    reserved--; // (only once dead: a close gives back every place kept, and keeps none after)
                    held--;
                    answeredOrReleased.signalAll(); // the delivering thread has ended: nobody waits for work
                }
                return false;
            }
            queued.add(element);
            if (reserved > 0) {
                reserved--;
            } else {
                held++;
            }
            workOrAnswer.signal();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * BLOCKS-UNTIL: at most {@code room} elements are held, or waiters are released, the hand-off
     * is closed, or it is dead; then, if there was room, keeps a place for the next offer.
     * {@return whether it kept one} ({@code false}: the wait was given up, or the hand-off is closed
     * or dead, so that no offer would take the place). Interrupts only wake it to look again, and
     * are cleared.
     */
    boolean reserve() {
        lock.lock();
        try {
            if (!waitForRoom() || closed || dead != null) { // closed or dead, before the wait or during it: no offer will be taken
                return false;
            }
            reserved++;
            held++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * BLOCKS-UNTIL: at most {@code room} elements are held, or waiters are released, the hand-off
     * is closed, or it is dead. Keeps no place. Interrupts only wake it to look again, and are
     * cleared.
     */
    void awaitRoom() {
        lock.lock();
        try {
            boolean _ = waitForRoom();
        } finally {
            lock.unlock();
        }
    }

    /** {@return whether there is room} ({@code false}: the wait was given up) */
    @GuardedBy("lock")
    private boolean waitForRoom() {
        while (held > room) {
            if (released || closed || dead != null) {
                return false;
            }
            try {
                answeredOrReleased.await();
            } catch (InterruptedException e) {
                // woken: look again (decision 0015)
            }
        }
        return true;
    }

    /** From now on nobody waits for room: the run is being cancelled. Any thread; never blocks for long. */
    void releaseWaiters() {
        lock.lock();
        try {
            released = true;
            answeredOrReleased.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Nothing more is offered: the delivering thread ends once everything held is answered, and the
     * places kept and not taken are given back. Any thread; idempotent.
     */
    void close() {
        lock.lock();
        try {
            closed = true;
            held -= reserved;
            reserved = 0;
            workOrAnswer.signal();
            answeredOrReleased.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * BLOCKS-UNTIL: nothing is held (every element offered has been answered or lost). Ignores
     * interrupts while it waits, and keeps them.
     */
    @SuppressWarnings("GuardedBy") // the check runs on this thread, inside the wait, which holds the lock
    void awaitAnswered() {
        lock.lock();
        try {
            Uninterruptibly.await(this::nothingHeld, answeredOrReleased::await);
        } finally {
            lock.unlock();
        }
    }

    /** {@return whether every element offered has been answered or lost} Call with the lock held. */
    @GuardedBy("lock")
    private boolean nothingHeld() {
        assert lock.isHeldByCurrentThread();
        return held == 0;
    }

    /**
     * The delivering thread never ran: {@return everything queued, taken out} It is no longer
     * held. Call only when no thread delivers.
     */
    List<E> takeQueued() {
        lock.lock();
        try {
            List<E> taken = new ArrayList<>(queued);
            queued.clear();
            held -= taken.size();
            answeredOrReleased.signalAll();
            return taken;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The delivering thread: delivers every batch, in order, and reports every answer, until the
     * hand-off is closed and nothing is held. Catches everything: if it cannot go on, the
     * hand-off dies, and the receiver hears what is lost.
     */
    void deliver(Receiver<E> receiver) {
        try {
            for (Step<E> step = next(); step != null; step = next()) {
                switch (step) {
                    case Step.Answer<E> answer -> {
                        receiver.answered(answer.flight().batch, answer.flight().cause);
                        answered(answer.flight());
                    }
                    case Step.Deliver<E> delivery -> {
                        InFlight<E> flight = delivery.flight();
                        // user code's interrupt status is its own: it never sees one left by an earlier call
                        boolean _ = Thread.interrupted();
                        receiver.deliver(flight.batch).whenComplete((ignore, cause) -> answer(flight, cause));
                    }
                }
            }
        } catch (Throwable e) {
            die(receiver, e);
        }
    }

    /** What the delivering thread does next. */
    private sealed interface Step<E> {
        /** The oldest batch in flight was answered: report it. */
        record Answer<E>(InFlight<E> flight) implements Step<E> {}

        /** A new batch to deliver, already counted in flight. */
        record Deliver<E>(InFlight<E> flight) implements Step<E> {}
    }

    /**
     * BLOCKS-UNTIL: the oldest batch in flight is answered, or a batch can be delivered, or the
     * hand-off is closed with nothing held. {@return the step, or {@code null} to end} Interrupts
     * only wake it to look again.
     */
    private @Nullable Step<E> next() {
        lock.lock();
        try {
            while (true) {
                InFlight<E> oldest = inFlight.peek();
                if (oldest != null && oldest.answered) {
                    return new Step.Answer<>(oldest);
                }
                if (!queued.isEmpty() && inFlight.size() < batchesInFlight) {
                    List<E> batch = new ArrayList<>(Math.min(batchLimit, queued.size()));
                    while (batch.size() < batchLimit && !queued.isEmpty()) {
                        batch.add(queued.poll());
                    }
                    InFlight<E> flight = new InFlight<>(batch);
                    inFlight.add(flight);
                    return new Step.Deliver<>(flight);
                }
                if (closed && held == 0) {
                    return null;
                }
                try {
                    workOrAnswer.await();
                } catch (InterruptedException e) {
                    // woken: look again; the delivering thread ends only once closed
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@code flight}'s stage completed: any thread (the receiver's store may complete it on its own). */
    private void answer(InFlight<E> flight, @Nullable Throwable cause) {
        lock.lock();
        try {
            if (!flight.answered) {
                flight.answered = true;
                flight.cause = cause;
                workOrAnswer.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The receiver has heard {@code flight}'s answer: its elements are no longer held. */
    private void answered(InFlight<E> flight) {
        lock.lock();
        try {
            if (inFlight.peek() == flight) { // not if the hand-off died meanwhile
                inFlight.poll();
                held -= flight.batch.size();
                answeredOrReleased.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The delivering thread cannot go on: nothing more is accepted, the receiver hears what is
     * lost, and only then is nothing held, so that a thread waiting for the last answer sees
     * what the receiver did with it.
     */
    private void die(Receiver<E> receiver, Throwable cause) {
        List<E> lost = new ArrayList<>();
        lock.lock();
        try {
            dead = cause;
            for (InFlight<E> flight : inFlight) {
                lost.addAll(flight.batch);
            }
            lost.addAll(queued);
            inFlight.clear();
            queued.clear();
        } finally {
            lock.unlock();
        }
        try {
            receiver.lost(lost, cause);
        } finally {
            lock.lock();
            try {
                held = reserved; // the places kept and not taken yet are given back by their offers, or by close
                answeredOrReleased.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
