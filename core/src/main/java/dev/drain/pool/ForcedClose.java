package dev.drain.pool;

/**
 * Reads a run's owner's stack to tell whether the JDK is closing, by force, the run's scope (WP-20,
 * decision 0054). The JDK gives no signal when it closes a scope its owner left open: what can be
 * seen is the owner, parked in {@code ThreadFlock$ThreadContainerImpl.tryClose} (see
 * {@link Structured.Boundary#isClosedUnderIt()}). That frame does not say <em>which</em> scope it
 * closes; what started the close, further down the stack, often does:
 * <ul>
 *   <li>{@code StackableScope.popAll}: the owner's thread is ending (or leaves a
 *       {@link ScopedValue} binding it made with no scope open): every scope it has open is
 *       closed, this run's too.</li>
 *   <li>{@code ScopedValueContainer.doRun} or {@code doCall}: a binding ends and closes the
 *       scopes opened inside it. They include this run's only if the binding was already made
 *       when the run was opened: then the binding's frame is the same method at the same depth,
 *       and every frame under it, down to the thread's first, the same frame at the same line, as
 *       when {@code run()} was called. A binding made later (a scope left open inside it, say)
 *       leaves the run alone.</li>
 *   <li>{@code ThreadFlock$ThreadContainerImpl.close}: the owner closes a scope that is not its
 *       newest. The scope's age cannot be read off the stack, only the frame that closes it: if
 *       that frame was already running when {@code run()} was called (the same method, at the same
 *       depth, over the same frames), the scope is taken to enclose the run (a try-with-resources
 *       statement around {@code run()}); if it was entered later, to be newer than the run.</li>
 * </ul>
 * The last rule can be wrong both ways (decision 0054). A scope opened after {@code run()} in a
 * frame that was running when {@code run()} was called (the very frame that called it, or one that
 * called the helper that did), or in a later call of the same method from the same line (a loop),
 * and closed there over a scope left open inside it, ends the run: the frames cannot be told
 * apart, and that close throws {@code StructureViolationException} at the owner anyway. A scope
 * opened before {@code run()} and closed by a method entered later is missed, and its close waits
 * for the run until someone calls {@code abort()}. On a stack deeper than the JVM reports
 * ({@code MaxJavaStackTraceDepth}, 1,024 frames by default) the depth of a frame is unknown, and a
 * frame is taken to be the one that was running if the frames the trace shows match at any depth.
 */
final class ForcedClose {
    private static final String FLOCK_CONTAINER = "jdk.internal.misc.ThreadFlock$ThreadContainerImpl";
    private static final String FLOCK = "jdk.internal.misc.ThreadFlock";
    private static final String STACKABLE_SCOPE = "jdk.internal.vm.StackableScope";
    private static final String SCOPED_VALUE_CONTAINER = "jdk.internal.vm.ScopedValueContainer";
    private static final String STRUCTURED_TASK_SCOPE = "java.util.concurrent.StructuredTaskScopeImpl";

    /** Shows the frames a stack trace shows (reflective calls included), so that the two compare. */
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.SHOW_REFLECT_FRAMES);

    /** The owner's whole stack when the run's scope was opened, innermost frame first. */
    private final StackTraceElement[] atOpen;

    /** @param atOpen the owner's stack when the run's scope was opened, innermost frame first (package-private for the reading's own tests) */
    ForcedClose(StackTraceElement[] atOpen) {
        this.atOpen = atOpen.clone();
    }

    /**
     * {@return the calling thread's stack now, to read later} Call on the owner, as it opens the
     * run's scope. The whole stack: a {@link StackWalker} has no depth limit, where a stack trace
     * keeps only the innermost {@code MaxJavaStackTraceDepth} (1,024) frames.
     */
    static ForcedClose capture() {
        return new ForcedClose(WALKER.walk(frames -> frames.map(StackWalker.StackFrame::toStackTraceElement)
                .toArray(StackTraceElement[]::new)));
    }

    /**
     * {@return whether {@code now}, the owner's stack, shows the JDK closing this run's scope by
     * force, or about to} {@code false} if it shows no forced close at all.
     */
    boolean reachesTheRun(StackTraceElement[] now) {
        int closing = indexOf(now, 0, FLOCK_CONTAINER, "tryClose");
        if (closing < 0) {
            return false;
        }
        int popped = indexOf(now, closing + 1, STACKABLE_SCOPE, "popAll");
        if (popped >= 0) {
            return true;
        }
        int pop = indexOf(now, closing + 1, STACKABLE_SCOPE, "popForcefully");
        if (pop < 0 || pop + 1 >= now.length) {
            return false; // a close this reading does not know: not one this run can tell is its own
        }
        StackTraceElement starter = now[pop + 1];
        if (starter.getClassName().equals(SCOPED_VALUE_CONTAINER)) {
            return wasRunningAtOpen(now, pop + 1); // the binding was made before the run was opened
        }
        if (starter.getClassName().equals(FLOCK_CONTAINER)) {
            int closer = pop + 1;
            while (closer < now.length && isScopeMachinery(now[closer])) {
                closer++;
            }
            return closer < now.length && wasRunningAtOpen(now, closer);
        }
        return false;
    }

    /**
     * {@return whether frame {@code index} of {@code now} was already running when the run was
     * opened} That is, the same method at the same depth, over the very frames (method and line)
     * it was over then; its own line has moved on. A stack trace of the owner keeps only its
     * innermost frames when it is deeper than the JVM reports ({@code MaxJavaStackTraceDepth}):
     * then the depth of what it shows is unknown, and any depth at which what it shows matches is
     * taken (WP-20 names this limit).
     */
    private boolean wasRunningAtOpen(StackTraceElement[] now, int index) {
        int below = now.length - 1 - index; // the frames under it that the trace shows
        if (now[now.length - 1].equals(atOpen[atOpen.length - 1])) {
            return matchesAt(now, index, atOpen.length - 1 - below); // the whole stack: its depth is known
        }
        for (int at = 0; at + below < atOpen.length; at++) {
            if (matchesAt(now, index, at)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return whether frame {@code index} of {@code now} and those under it are frame {@code at} of
     * the open and those under it} {@code at} may be negative (a stack deeper now than at the
     * open); {@code at} plus the frames under {@code index} stays within the open's stack (both
     * callers keep it so).
     */
    private boolean matchesAt(StackTraceElement[] now, int index, int at) {
        if (at < 0 || !sameMethod(now[index], atOpen[at])) {
            return false;
        }
        for (int k = 1; index + k < now.length; k++) {
            if (!now[index + k].equals(atOpen[at + k])) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameMethod(StackTraceElement now, StackTraceElement then) {
        return now.getClassName().equals(then.getClassName()) && now.getMethodName().equals(then.getMethodName());
    }

    private static boolean isScopeMachinery(StackTraceElement frame) {
        String type = frame.getClassName();
        return type.equals(FLOCK_CONTAINER) || type.equals(FLOCK) || type.equals(STRUCTURED_TASK_SCOPE);
    }

    private static int indexOf(StackTraceElement[] stack, int from, String type, String method) {
        for (int i = from; i < stack.length; i++) {
            if (stack[i].getClassName().equals(type) && stack[i].getMethodName().equals(method)) {
                return i;
            }
        }
        return -1;
    }
}
