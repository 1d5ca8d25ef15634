package dev.drain.queue;

/**
 * Whether the queue's three exceptions record where they were thrown (decision 0012).
 *
 * <p>{@link QueueShutDown}, {@link QueueEmpty} and {@link QueueFull} are outcomes, not faults:
 * the caller expects them and handles them at the call, as Python's code handles
 * {@code QueueShutDown} or {@code StopIteration}. Filling in a stack trace walks the thread's
 * stack and was most of the cost of waking a blocked thread at shutdown (10,000 getters: 29 ms
 * with stack traces, 13 ms without; 10,000 poison pills take 10–13 ms; see BENCHMARKS.md). So by
 * default they have none, as kotlinx.coroutines' cancellation exceptions have none outside its
 * debug mode; run with {@value #PROPERTY}{@code =true} to have them back while debugging.
 */
final class StackTraces {
    /** The system property that turns stack traces on. */
    static final String PROPERTY = "dev.drain.queue.stackTraces";

    private StackTraces() {}

    /**
     * {@return whether an exception created now records its stack trace} Read at each creation,
     * not once, so that a JShell session or a test can turn it on and off.
     */
    static boolean recorded() {
        return Boolean.getBoolean(PROPERTY);
    }
}
