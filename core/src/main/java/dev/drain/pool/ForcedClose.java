package dev.drain.pool;

import org.jspecify.annotations.Nullable;

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
 *       when the run was opened: then every frame from the binding's down to the thread's first
 *       is the same frame, at the same line, as when {@code run()} was called. A binding made
 *       later (a scope left open inside it, say) leaves the run alone.</li>
 *   <li>{@code ThreadFlock$ThreadContainerImpl.close}: the owner closes a scope that is not its
 *       newest. The scope's age cannot be read off the stack, only the frame that closes it: if
 *       that frame was already running when {@code run()} was called (the same method, at the same
 *       depth, over the same frames), the scope is taken to enclose the run (a try-with-resources
 *       statement around {@code run()}); if it was entered later, to be newer than the run.</li>
 * </ul>
 * The last rule can be wrong both ways (decision 0054): a scope opened after {@code run()} in the
 * very frame that called it, and closed there over a scope left open inside it, ends the run
 * (that close throws {@code StructureViolationException} at the owner anyway); a scope opened
 * before {@code run()} and closed by a method entered later is missed, and its close waits for
 * the run until someone calls {@code abort()}.
 */
final class ForcedClose {
    private static final String FLOCK_CONTAINER = "jdk.internal.misc.ThreadFlock$ThreadContainerImpl";
    private static final String FLOCK = "jdk.internal.misc.ThreadFlock";
    private static final String STACKABLE_SCOPE = "jdk.internal.vm.StackableScope";
    private static final String SCOPED_VALUE_CONTAINER = "jdk.internal.vm.ScopedValueContainer";
    private static final String STRUCTURED_TASK_SCOPE = "java.util.concurrent.StructuredTaskScopeImpl";

    /** The owner's stack when the run's scope was opened, innermost frame first. */
    private final StackTraceElement[] atOpen;

    private ForcedClose(StackTraceElement[] atOpen) {
        this.atOpen = atOpen;
    }

    /** {@return the calling thread's stack now, to read later} Call on the owner, as it opens the run's scope. */
    static ForcedClose capture() {
        return new ForcedClose(Thread.currentThread().getStackTrace());
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
            return sameFramesFrom(now, pop + 1); // the binding was made before the run was opened
        }
        if (starter.getClassName().equals(FLOCK_CONTAINER)) {
            int closer = pop + 1;
            while (closer < now.length && isScopeMachinery(now[closer])) {
                closer++;
            }
            return closer < now.length && sameFramesFrom(now, closer + 1)
                    && sameMethod(now[closer], frameAtDepth(depth(now, closer)));
        }
        return false;
    }

    /** {@return whether every frame of {@code now} from index {@code from} to the thread's first is the frame it was at the open} */
    private boolean sameFramesFrom(StackTraceElement[] now, int from) {
        for (int i = from; i < now.length; i++) {
            StackTraceElement then = frameAtDepth(depth(now, i));
            if (then == null || !then.equals(now[i])) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameMethod(StackTraceElement now, @Nullable StackTraceElement then) {
        return then != null && now.getClassName().equals(then.getClassName())
                && now.getMethodName().equals(then.getMethodName());
    }

    /** {@return how far frame {@code index} of {@code stack} is from the thread's first frame} */
    private static int depth(StackTraceElement[] stack, int index) {
        return stack.length - 1 - index;
    }

    /** {@return the frame at {@code depth} from the thread's first when the run was opened, or {@code null}} */
    private @Nullable StackTraceElement frameAtDepth(int depth) {
        int index = atOpen.length - 1 - depth;
        return index >= 0 && index < atOpen.length ? atOpen[index] : null;
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
