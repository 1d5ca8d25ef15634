package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Uninterruptibly;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The one place that uses {@link java.util.concurrent.StructuredTaskScope}: a preview API in JDK 25 whose shape changes
 * in JDK 26 (JEP 525). The pool needs three things from it, and nothing else:
 * <ul>
 *   <li>{@link Boundary}: the run's outermost scope, opened on the thread that calls
 *       {@code run()} and left open while that thread iterates the results, so that the run's
 *       threads hang off the caller (its {@link ScopedValue} bindings are inherited, and a thread
 *       dump shows the run's tree under it);</li>
 *   <li>{@link #runAll}: a scope whose owner forks a group of long-lived subtasks and waits for
 *       all of them (the driver's scope: producer and workers);</li>
 *   <li>{@link Single}: a scope holding one subtask whose owner waits for it with its
 *       <em>own</em> deadline and can interrupt it again and again before it closes the scope
 *       (one attempt). {@code StructuredTaskScope} alone interrupts a subtask once, on
 *       cancellation, and {@code close()} then waits for it forever; the escalation has to
 *       happen before {@code close()}, and {@code Single} is what makes that possible.</li>
 * </ul>
 * JDK 25 facts this relies on (JEP 505): only the owner forks, joins and closes; {@code join()}
 * is called once, and waits until every thread of the scope has finished (unless the scope is
 * cancelled); a subtask's thread comes from the configured {@code ThreadFactory}, called in
 * {@code fork} by the owner; a subtask inherits the owner's {@link ScopedValue} bindings, and a
 * scope opened inside a binding must be closed inside it ({@code StructureViolationException});
 * scopes opened by one thread close in the reverse order; {@code close()} cancels the scope if it
 * was not joined (interrupting each unfinished thread once) and waits for every thread.
 *
 * <p><b>As a model of JDK 25 use.</b> {@link #runAll} is the idiom as JEP 505 shows it: open in a
 * try-with-resources statement, fork, {@code join()} once, let {@code close()} clean up, a stock
 * {@code Joiner}. The rest departs from the idiom in four places, each for a reason the pool cannot
 * avoid:
 * <ol>
 *   <li><b>The type is named in full, behind small interfaces.</b> Idiomatic code imports
 *       {@code StructuredTaskScope} and may keep a scope in a field. Here every use is inside a
 *       method body, and {@link Boundary} and {@link Single} hold their scope through a lambda or
 *       a private interface, because javac's preview warning cannot be suppressed on an import or
 *       a field's type, and the build turns warnings into errors.</li>
 *   <li><b>{@link Boundary} spans calls.</b> The idiom opens, joins and closes a scope in one
 *       block. The run's outermost scope is opened by {@code run()}, joined when the results run
 *       out and closed by {@code Results.close()}: the caller's try-with-resources around the
 *       results is the block, and the owner-only rule of the results (WP-17) is the scope's own
 *       rule, passed on to the caller.</li>
 *   <li><b>{@link Single} waits for a wake-up, not with {@code join()} and a timeout.</b> A scope
 *       configured {@code withTimeout} is cancelled at the deadline, which interrupts the subtask
 *       once; {@code close()} then waits for it without a bound, so a handler that swallows the
 *       interrupt hangs its owner (decision 0007). The owner here parks until its
 *       {@code Joiner}'s {@code onComplete} records the ending and unparks it, or until its own
 *       deadline wakes it (decision 0022), and keeps the subtask's
 *       thread (captured from the thread factory) so that it can interrupt it again, in rounds,
 *       before it closes the scope. Idiomatic code never touches a subtask's thread.</li>
 *   <li><b>{@link Boundary#awaitAll} outlives an interrupted {@code join()}.</b> {@code join()}
 *       may be called once; if the owner is interrupted in it, the run's threads are still
 *       finishing (they end on their own once the run has ended), so the boundary joins them one
 *       by one, keeping the interrupt, instead of leaving a scope whose threads may still run.</li>
 * </ol>
 * JDK 26 (JEP 525) changes the API's shape again; this file is the only one to change with it.
 */
// StructuredTaskScope is a preview API in JDK 25, and this file is its only user. javac's preview
// warning cannot be suppressed on an import or in a member's signature (a field's type, a class's
// supertype), so the type is named in full and only inside method bodies.
@SuppressWarnings("preview")
final class Structured {
    private Structured() {}

    /**
     * Does nothing: calling it loads this class, the one class file of drain marked as needing
     * preview features, so that a JVM without {@code --enable-preview} fails here, with an
     * {@link UnsupportedClassVersionError}, and not at a run's first step.
     */
    static void load() {
        // the class is loaded and linked: preview features are enabled
    }

    /** Forks one subtask into the scope being set up; callable only by the scope's owner. */
    @FunctionalInterface
    interface Forker {
        /** Forks {@code subtask} on a new thread whose name says its {@code role}. */
        void fork(String role, Runnable subtask);
    }

    /** Makes the threads of a scope, named by role. */
    @FunctionalInterface
    interface Threads {
        ThreadFactory forRole(String role);
    }

    /** Forks the subtasks of a scope. */
    @FunctionalInterface
    interface Body {
        void forkInto(Forker forker);
    }

    /**
     * The run's outermost scope, owned by the thread that opened it: that thread forks into it,
     * joins it and closes it, possibly in different calls (the scope stays open between them).
     *
     * <p>Because the scope spans calls, its owner can leave it open by mistake, and the JDK then
     * closes it <em>under</em> the run: when the owner's thread exits (a forgotten
     * {@code close()}), when the owner closes a scope that encloses it or the boundary of an
     * earlier run first, or when a {@link ScopedValue} binding around {@code run()} ends. The JDK
     * does that quietly: it neither cancels the scope nor interrupts its threads, and waits for
     * them without a bound (JDK 25's {@code ThreadFlock.close}, called from the enclosing
     * container's {@code tryClose}), so a run that waits for its consumer would keep the owner, and
     * at a thread's exit the JVM, waiting for ever. What can be seen from outside is the owner
     * itself: parked with no blocker, with that forced close on its stack. {@link #isClosedUnderIt()}
     * looks (decision 0028), and the run's watchdog asks it every few milliseconds. Each open
     * boundary is registered under its owner, newest last, until its run has ended, so that only
     * the newest of an owner's open runs answers yes (the JDK closes the newest first), and so that
     * the owner closing an earlier run first can end the newer ones before the JDK closes them
     * ({@link #endNewerRuns()}).
     */
    static final class Boundary implements AutoCloseable {

        /** Every owner's open boundaries whose runs have not ended, in the order they were opened. */
        @GuardedBy("OPEN")
        private static final Map<Thread, List<Boundary>> OPEN = new HashMap<>();
        /** Counts the boundaries opened, to order them. */
        private static final java.util.concurrent.atomic.AtomicLong OPENINGS = new java.util.concurrent.atomic.AtomicLong();

        /** The scope, through the three calls the owner makes; holds it so no field names its type. */
        private interface Scope {
            void fork(Runnable task);

            void join() throws InterruptedException;

            void close();
        }

        private final Scope scope;
        private final Thread owner = Thread.currentThread();
        /** When this boundary was opened, in the order of every boundary's opening: a newer one has a larger number. */
        private final long opened = OPENINGS.incrementAndGet();
        /** The owner's stack as it opened the scope, to tell later whether a forced close is this scope's. */
        private final ForcedClose forcedClose = ForcedClose.capture();
        /** What ends the run when the JDK is about to close its scope under it; any thread. */
        private final Runnable endRun;
        /** The thread factory's role for the next fork; owner-confined (fork calls the factory on the owner). */
        private final String[] role;
        /** Every thread the scope's factory made, in order; owner-confined. */
        private final List<Thread> forked;
        /** Whether the owner has waited for every thread; owner-confined. */
        private boolean joined;

        private Boundary(Scope scope, Runnable endRun, String[] role, List<Thread> forked) {
            this.scope = scope;
            this.endRun = endRun;
            this.role = role;
            this.forked = forked;
            synchronized (OPEN) {
                OPEN.computeIfAbsent(owner, t -> new ArrayList<>()).add(this);
            }
        }

        /**
         * Opens a scope named {@code name} on the calling thread, which owns it; {@code endRun}
         * ends the run (as an abandon) when its scope is about to be closed under it.
         */
        static Boundary open(String name, Threads threads, Runnable endRun) {
            String[] role = {"task"};
            List<Thread> forked = new ArrayList<>();
            ThreadFactory byRole = runnable -> {
                Thread thread = threads.forRole(role[0]).newThread(runnable);
                forked.add(thread);
                return thread;
            };
            var opened = java.util.concurrent.StructuredTaskScope.open(java.util.concurrent.StructuredTaskScope.Joiner.<@Nullable Object>awaitAll(),
                    config -> config.withName(name).withThreadFactory(byRole));
            return new Boundary(new Scope() {
                @Override
                public void fork(Runnable task) {
                    opened.fork(task);
                }

                @Override
                public void join() throws InterruptedException {
                    opened.join();
                }

                @Override
                public void close() {
                    opened.close();
                }
            }, endRun, role, forked);
        }

        /** {@return the thread that opened the scope and owns it} */
        Thread owner() {
            return owner;
        }

        /**
         * The run has ended (every thread it forked has finished or is about to): this boundary
         * no longer counts among its owner's open runs. Any thread; idempotent.
         */
        void runEnded() {
            synchronized (OPEN) {
                List<Boundary> open = OPEN.get(owner);
                if (open != null && open.remove(this) && open.isEmpty()) {
                    OPEN.remove(owner);
                }
            }
        }

        /**
         * {@return whether the JDK is closing this scope under its run} That is: this is the newest
         * of its owner's open runs, and the owner has ended (it cannot close anything any more),
         * or is parked in the JDK's forced close of its scopes, which closes the newest first, and
         * that close reaches this scope ({@link ForcedClose}: not a scope opened later and left
         * open, whose forced close leaves the run alone). Any thread; reads the owner's state, and
         * its stack only when it is parked with no blocker (a consumer waiting for a result is
         * parked on a queue's condition).
         */
        boolean isClosedUnderIt() {
            synchronized (OPEN) {
                List<Boundary> open = OPEN.get(owner);
                if (open == null || open.isEmpty() || open.get(open.size() - 1) != this) {
                    return false;
                }
            }
            Thread.State state = owner.getState();
            if (state == Thread.State.TERMINATED) {
                return true;
            }
            if (state != Thread.State.WAITING || LockSupport.getBlocker(owner) != null) {
                return false;
            }
            return forcedClose.reachesTheRun(owner.getStackTrace()); // a forced close, and one that reaches this run?
        }

        /**
         * The owner is closing this scope while runs it opened later are still going: closing this
         * one makes the JDK close theirs first, under them, so they are ended now, newest first.
         * Call on the owner, before {@link #close()}.
         */
        void endNewerRuns() {
            List<Boundary> newer = new ArrayList<>();
            synchronized (OPEN) {
                for (Boundary open : OPEN.getOrDefault(owner, List.of())) {
                    if (open.opened > opened) { // this run may have ended already: its scope is still open
                        newer.add(open);
                    }
                }
            }
            for (int i = newer.size() - 1; i >= 0; i--) {
                newer.get(i).endRun.run();
            }
        }

        /** Forks {@code task} on a new thread whose name says its {@code role}. */
        void fork(String forRole, Runnable task) {
            role[0] = forRole;
            int before = forked.size();
            scope.fork(task);
            if (forked.size() != before + 1) {
                throw new IllegalStateException("the scope did not start a thread for " + forRole);
            }
        }

        /**
         * Waits until every forked thread has finished, then completes the scope's join. An
         * interrupt does not cut the wait short (the run's threads end on their own once the run
         * has ended or been cancelled); it is kept, and set again on return.
         */
        void awaitAll() {
            if (joined) {
                return;
            }
            boolean interrupted = Thread.interrupted();
            try {
                scope.join();
            } catch (InterruptedException e) {
                interrupted = true;
                // join() is spent; wait for the threads themselves
                for (Thread thread : forked) {
                    Uninterruptibly.join(thread);
                }
            } finally {
                joined = true;
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Closes the scope. Call {@link #awaitAll()} first: a scope is joined before it is closed. */
        @Override
        public void close() {
            scope.close();
        }

        /** Test seam: {@return whether {@code owner} has an open run on record} (WP-20: none once its runs have ended) */
        static boolean hasOpenRuns(Thread owner) {
            synchronized (OPEN) {
                return OPEN.containsKey(owner);
            }
        }
    }

    /**
     * Opens a scope named {@code name} on threads from {@code threads}, lets {@code body} fork
     * its subtasks, and waits for all of them. If one throws, the scope is cancelled and the
     * exception propagates wrapped in {@link java.util.concurrent.StructuredTaskScope.FailedException} (for the pool
     * that is a bug). If the owner is interrupted while it waits, the scope is cancelled: every
     * unfinished subtask's thread is interrupted once, {@code close()} waits for all of them, and
     * then {@code InterruptedException} propagates.
     */
    static void runAll(String name, Threads threads, Body body) throws InterruptedException {
        // fork() calls the factory on the owner's thread, so the role of the next fork can be
        // handed to it through a plain field of this frame.
        String[] role = {"task"};
        ThreadFactory byRole = runnable -> threads.forRole(role[0]).newThread(runnable);
        try (var scope = java.util.concurrent.StructuredTaskScope.open(java.util.concurrent.StructuredTaskScope.Joiner.<@Nullable Object>awaitAllSuccessfulOrThrow(),
                config -> config.withName(name).withThreadFactory(byRole))) {
            body.forkInto((forRole, subtask) -> {
                role[0] = forRole;
                scope.fork(subtask);
            });
            scope.join();
        }
    }

    /** How a subtask ended. */
    sealed interface Ending<R> {
        /** It returned {@code value}. */
        record Returned<R>(R value) implements Ending<R> {}

        /** It threw {@code error}. */
        record Threw<R>(Throwable error) implements Ending<R> {}
    }

    /**
     * One subtask in a scope of its own. The owner (the thread that called {@link #fork}) waits
     * for it with {@link #awaitEnd}, reads {@link #ending} once it has completed, and closes it, in
     * a try-with-resources statement. Interrupting the subtask is someone else's job (the run's
     * watchdog, which gets the subtask's thread from the thread factory it hands to
     * {@code fork}); the owner only waits.
     *
     * @param <R> the subtask's result type
     */
    static final class Single<R> implements AutoCloseable {
        private final Completion<R> completion;
        /** Joins (if {@code true}) and closes the scope; holds the scope so no field names its type. */
        private final Closer closer;

        /** Closes the scope; the only reference to it. */
        @FunctionalInterface
        private interface Closer {
            void close(boolean join) throws InterruptedException;
        }

        private Single(String name, ThreadFactory threads, Callable<? extends R> task, Runnable onCompleted) {
            this.completion = new Completion<>(onCompleted);
            // A joiner that records how the one subtask ended and wakes the owner: generic policy,
            // no business logic, never cancels. onComplete runs on the subtask's thread.
            var joiner = new java.util.concurrent.StructuredTaskScope.Joiner<R, @Nullable Void>() {
                @Override
                public boolean onComplete(java.util.concurrent.StructuredTaskScope.Subtask<? extends R> subtask) {
                    switch (subtask.state()) {
                        case SUCCESS -> completion.complete(new Ending.Returned<>(subtask.get()));
                        case FAILED -> completion.complete(new Ending.Threw<>(subtask.exception()));
                        case UNAVAILABLE -> throw new AssertionError("unreachable: onComplete sees a completed subtask");
                    }
                    return false;
                }

                @Override
                public @Nullable Void result() {
                    return null;
                }
            };
            var scope = java.util.concurrent.StructuredTaskScope.open(joiner,
                    config -> config.withName(name).withThreadFactory(threads));
            // A new scope whose joiner never cancels it starts the thread it is given; if there is
            // none (the factory threw, or gave null and the JDK threw), the scope is closed here.
            try {
                scope.fork(task);
            } catch (Throwable e) {
                scope.close();
                throw e;
            }
            this.closer = join -> {
                try {
                    if (join) {
                        scope.join(); // the owner must join after forking
                    }
                } finally {
                    scope.close();
                }
            };
        }

        /**
         * Forks {@code task} in a new scope named {@code name}, on a thread from {@code threads};
         * {@code onCompleted} runs on that thread when the task has returned or thrown, before the
         * owner can see it {@linkplain #isCompleted completed}.
         */
        static <R> Single<R> fork(String name, ThreadFactory threads, Callable<? extends R> task, Runnable onCompleted) {
            return new Single<>(name, threads, task, onCompleted);
        }

        /**
         * BLOCKS-UNTIL: the subtask has completed. Interrupts do not end the wait (they only wake
         * the owner to look again) and are not kept: the owner is a pool thread, which decides by
         * the run's phase (decision 0015), and stopping the subtask is the watchdog's job.
         */
        void awaitEnd() {
            while (!isCompleted()) {
                LockSupport.park(this);
                Thread.interrupted();
            }
        }

        /** {@return whether the subtask has completed} */
        boolean isCompleted() {
            return completion.ending != null;
        }

        /** {@return how the subtask ended} Call only once it has {@linkplain #isCompleted completed}. */
        Ending<R> ending() {
            Ending<R> ending = completion.ending;
            if (ending == null) {
                throw new IllegalStateException("the subtask has not completed");
            }
            return ending;
        }

        /**
         * Joins and closes the scope. Once the subtask has completed, this returns as soon as its
         * thread has finished. Before that (only when the owner is failing: the body of its
         * try-with-resources statement threw), it closes the scope unjoined, as the JDK's
         * {@code close()} does: the scope is cancelled (the subtask is interrupted once), the
         * thread is waited for without a bound, and then the JDK's {@link IllegalStateException}
         * ("Owner did not join after forking") is thrown, which try-with-resources adds, suppressed,
         * to the owner's own failure. The caller's interrupt status is kept.
         *
         * @throws IllegalStateException if the subtask had not completed
         */
        @Override
        public void close() {
            try {
                closer.close(isCompleted());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * How a subtask ended, written once on the subtask's thread, which then wakes the owner (the
     * thread that created it, and forks and waits for the subtask).
     */
    private static final class Completion<R> {
        private final Thread owner = Thread.currentThread();
        private final Runnable onCompleted;
        /** Written once, when the subtask completes; {@code null} until then. */
        volatile @Nullable Ending<R> ending;

        Completion(Runnable onCompleted) {
            this.onCompleted = onCompleted;
        }

        void complete(Ending<R> ending) {
            onCompleted.run(); // first: the owner reads what it decided once it sees the ending
            this.ending = ending;
            LockSupport.unpark(owner);
        }
    }
}
