package dev.drain.pool;

import java.util.ArrayList;
import java.util.List;
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
     */
    static final class Boundary implements AutoCloseable {

        /** The scope, through the three calls the owner makes; holds it so no field names its type. */
        private interface Scope {
            void fork(Runnable task);

            void join() throws InterruptedException;

            void close();
        }

        private final Scope scope;
        /** The thread factory's role for the next fork; owner-confined (fork calls the factory on the owner). */
        private final String[] role;
        /** Every thread the scope's factory made, in order; owner-confined. */
        private final List<Thread> forked;
        /** Whether the owner has waited for every thread; owner-confined. */
        private boolean joined;

        private Boundary(Scope scope, String[] role, List<Thread> forked) {
            this.scope = scope;
            this.role = role;
            this.forked = forked;
        }

        /** Opens a scope named {@code name} on the calling thread, which owns it. */
        static Boundary open(String name, Threads threads) {
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
            }, role, forked);
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
                    while (thread.isAlive()) {
                        try {
                            thread.join();
                        } catch (InterruptedException again) {
                            interrupted = true;
                        }
                    }
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
     * for it with {@link #await}, may {@link #interrupt} its thread any number of times, reads
     * {@link #ending} once it has completed, and closes it, in a try-with-resources statement.
     *
     * @param <R> the subtask's result type
     */
    static final class Single<R> implements AutoCloseable {
        private final Completion<R> completion = new Completion<>();
        /** The subtask's thread: created by the scope's thread factory inside fork, on the owner. */
        private final Thread thread;
        /** Joins (if {@code true}) and closes the scope; holds the scope so no field names its type. */
        private final Closer closer;

        /** Closes the scope; the only reference to it. */
        @FunctionalInterface
        private interface Closer {
            void close(boolean join) throws InterruptedException;
        }

        private Single(String name, ThreadFactory threads, Callable<? extends R> task) {
            Thread[] created = new Thread[1];
            ThreadFactory capturing = runnable -> created[0] = threads.newThread(runnable);
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
                    config -> config.withName(name).withThreadFactory(capturing));
            scope.fork(task);
            this.closer = join -> {
                try {
                    if (join) {
                        scope.join(); // the owner must join after forking
                    }
                } finally {
                    scope.close();
                }
            };
            Thread started = created[0];
            if (started == null) {
                scope.close();
                throw new IllegalStateException("the scope did not start a thread for " + name);
            }
            this.thread = started;
        }

        /** Forks {@code task} in a new scope named {@code name}, on a thread from {@code threads}. */
        static <R> Single<R> fork(String name, ThreadFactory threads, Callable<? extends R> task) {
            return new Single<>(name, threads, task);
        }

        /**
         * Waits at most {@code nanos} for the subtask to complete; {@return whether it has}
         *
         * @throws InterruptedException if the owner is interrupted first (its status cleared)
         */
        boolean await(long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            while (!isCompleted()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
            return true;
        }

        /**
         * Waits, without a timeout, until the subtask completes or someone wakes the owner:
         * another thread's {@link LockSupport#unpark}, or a spurious wake-up. The caller looks at
         * what it waits for and waits again.
         *
         * @throws InterruptedException if the owner is interrupted (its status cleared)
         */
        void awaitWake() throws InterruptedException {
            if (!isCompleted()) {
                LockSupport.park(this);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }

        /** {@return whether the subtask has completed} */
        boolean isCompleted() {
            return completion.ending != null;
        }

        /** Interrupts the subtask's thread (again). */
        void interrupt() {
            thread.interrupt();
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
         * Joins and closes the scope. Once the subtask has completed this returns as soon as its
         * thread has finished; before that, it cancels the scope (one more interrupt) and waits
         * for the thread, without a bound. The caller's interrupt status is kept.
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
        /** Written once, when the subtask completes; {@code null} until then. */
        volatile @Nullable Ending<R> ending;

        void complete(Ending<R> ending) {
            this.ending = ending;
            LockSupport.unpark(owner);
        }
    }
}
