package dev.drain.jobtable;

import org.jspecify.annotations.Nullable;

/**
 * The module's one form of "wait, keep the interrupt, finish the wait": for a wait whose end the
 * caller must see whatever interrupts it (a statement under way, whose outcome must be known; a
 * thread that would otherwise outlive the table). An interrupt is remembered, the wait goes on,
 * and the interrupt is restored when the wait ends, by returning or by throwing.
 *
 * <p>The core has the same policy in several places of its own; a later change gives it one home
 * there, and this class goes.
 */
final class Uninterruptibly {
    private Uninterruptibly() {}

    /** A wait that an interrupt can cut short, and that may fail with {@code X}. */
    @FunctionalInterface
    interface Wait<X extends Exception> {
        void await() throws InterruptedException, X;
    }

    /**
     * Waits until {@code wait} returns or throws something other than an interrupt, waiting again
     * after every interrupt; the caller's interrupt is kept.
     *
     * @throws X what the wait threw, with the caller's interrupt restored first
     */
    static <X extends Exception> void await(Wait<X> wait) throws X {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    wait.await();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the wait's end must be seen: wait again, and keep the interrupt
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits for {@code t} to end, if there is one and it is not the caller, whatever interrupts the caller. */
    static void join(@Nullable Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        await(t::join);
    }
}
