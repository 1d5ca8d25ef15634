package dev.drain.pool;

import dev.drain.safe.SafeText;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import org.jspecify.annotations.Nullable;

/**
 * The pool's JDK Flight Recorder events: a recording shows each attempt (with its duration), each
 * timeout and escalated interrupt, the lead of the source at each pull, and each stop, abort and
 * abandon, under "drain" in JDK Mission Control; {@code ./contract-report --html} draws its
 * timelines from them. They cost nothing when no recording is running.
 */
final class PoolEvents {
    private PoolEvents() {}

    private static final jdk.jfr.EventType TIMEOUT = jdk.jfr.EventType.getEventType(Timeout.class);
    private static final jdk.jfr.EventType ESCALATION = jdk.jfr.EventType.getEventType(Escalation.class);
    private static final jdk.jfr.EventType LEAD = jdk.jfr.EventType.getEventType(Lead.class);

    /**
     * Records a {@link Lead} if a recording wants it. The producer's event is made only then: the
     * JIT does not always elide it, and it would cost 32 bytes per item.
     */
    static void lead(String pool, long lead, long bound) {
        if (LEAD.isEnabled()) {
            new Lead().commitFor(pool, lead, bound);
        }
    }

    /**
     * {@return the item's text for the watchdog's events ({@link Timeout}, {@link Escalation}), or
     * {@code null} when no recording wants them} Built on the worker, before the attempt: the
     * watchdog never runs user code, an item's {@code toString} included.
     */
    static @Nullable String labelIfRecording(ItemContext<?> context) {
        return TIMEOUT.isEnabled() || ESCALATION.isEnabled() ? SafeText.of(context.item()) : null;
    }

    @Name("dev.drain.pool.Attempt")
    @Label("Attempt")
    @Category({"drain", "Worker pool"})
    @Description("One attempt at handling one item, from fork to its end")
    static final class Attempt extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Item")
        @Nullable String item;
        @Label("Attempt")
        int attempt;
        @Label("Worker")
        int worker;
        @Label("Outcome")
        @Description("succeeded, failed, timed out, cancelled or stuck")
        @Nullable String outcome;

        /** Commits this (begun and ended) event, if a recording wants it. */
        void commitFor(String pool, ItemContext<?> context, String outcome) {
            if (shouldCommit()) {
                this.pool = pool;
                this.item = SafeText.of(context.item());
                this.attempt = context.attempt();
                this.worker = context.worker();
                this.outcome = outcome;
                commit();
            }
        }
    }

    @Name("dev.drain.pool.Escalation")
    @Label("Interrupt escalated")
    @Category({"drain", "Worker pool"})
    @Description("An attempt was still running after an interrupt and was interrupted again")
    static final class Escalation extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Item")
        @Nullable String item;
        @Label("Attempt")
        int attempt;
        @Label("Round")
        @Description("2 or 3: the interrupt's round")
        int round;

        void commitFor(String pool, ItemContext<?> context, @Nullable String label, int round) {
            if (shouldCommit()) {
                this.pool = pool;
                this.item = label;
                this.attempt = context.attempt();
                this.round = round;
                commit();
            }
        }
    }

    @Name("dev.drain.pool.StopRequested")
    @Label("Stop requested")
    @Category({"drain", "Worker pool"})
    static final class StopRequested extends Event {
        @Label("Pool")
        @Nullable String pool;

        void commitFor(String pool) {
            if (shouldCommit()) {
                this.pool = pool;
                commit();
            }
        }
    }

    @Name("dev.drain.pool.Abort")
    @Label("Abort")
    @Category({"drain", "Worker pool"})
    static final class Abort extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Discarded")
        @Description("Queued items the abort dropped")
        int discarded;

        void commitFor(String pool, int discarded) {
            if (shouldCommit()) {
                this.pool = pool;
                this.discarded = discarded;
                commit();
            }
        }
    }

    @Name("dev.drain.pool.Timeout")
    @Label("Attempt timed out")
    @Category({"drain", "Worker pool"})
    @Description("An attempt outlived itemTimeout; the first interrupt follows")
    static final class Timeout extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Item")
        @Nullable String item;
        @Label("Attempt")
        int attempt;
        @Label("Worker")
        int worker;

        void commitFor(String pool, ItemContext<?> context, @Nullable String label) {
            if (shouldCommit()) {
                this.pool = pool;
                this.item = label;
                this.attempt = context.attempt();
                this.worker = context.worker();
                commit();
            }
        }
    }

    @Name("dev.drain.pool.Lead")
    @Label("Lead of the source")
    @Category({"drain", "Worker pool"})
    @Description("At each pull from the source: items pulled and not yet settled, against the bound")
    static final class Lead extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Lead")
        long lead;
        @Label("Bound")
        @Description("queueSize + workers + 1")
        long bound;

        void commitFor(String pool, long lead, long bound) {
            if (shouldCommit()) {
                this.pool = pool;
                this.lead = lead;
                this.bound = bound;
                commit();
            }
        }
    }

    @Name("dev.drain.pool.Abandon")
    @Label("Abandon")
    @Category({"drain", "Worker pool"})
    @Description("The consumer closed the results before the end, was interrupted while it waited, or its owner's scope was closed under the run")
    static final class Abandon extends Event {
        @Label("Pool")
        @Nullable String pool;
        @Label("Interrupted")
        boolean interrupted;

        void commitFor(String pool, boolean interrupted) {
            if (shouldCommit()) {
                this.pool = pool;
                this.interrupted = interrupted;
                commit();
            }
        }
    }
}
