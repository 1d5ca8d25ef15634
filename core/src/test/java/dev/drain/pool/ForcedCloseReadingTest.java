package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * WP-20, decision 0054: {@link ForcedClose}'s reading of an owner's stack, rule by rule, on stacks
 * written out frame by frame (innermost first), beside the stack the owner had when it opened the
 * run. {@link ForcedCloseTest} and {@link OwnerScopeClosedTest} hold the same rules on the JDK's
 * real stacks; these hold the edges a real stack rarely shows (a frame at either end, a stack
 * deeper or shallower than at the open, a trace cut short).
 */
class ForcedCloseReadingTest {
    private static final String CONTAINER = "jdk.internal.misc.ThreadFlock$ThreadContainerImpl";
    private static final String FLOCK = "jdk.internal.misc.ThreadFlock";
    private static final String STACKABLE = "jdk.internal.vm.StackableScope";
    private static final String BINDING = "jdk.internal.vm.ScopedValueContainer";
    private static final String SCOPE = "java.util.concurrent.StructuredTaskScopeImpl";

    private static StackTraceElement frame(String type, String method, int line) {
        return new StackTraceElement(type, method, "F.java", line);
    }

    private static final StackTraceElement PARK = frame("java.util.concurrent.locks.LockSupport", "park", 1);
    private static final StackTraceElement TRY_CLOSE = frame(CONTAINER, "tryClose", 2);
    private static final StackTraceElement POP_ALL = frame(STACKABLE, "popAll", 3);
    private static final StackTraceElement POP = frame(STACKABLE, "popForcefully", 4);
    private static final StackTraceElement CONTAINER_CLOSE = frame(CONTAINER, "close", 5);
    private static final StackTraceElement FLOCK_CLOSE = frame(FLOCK, "close", 6);
    private static final StackTraceElement SCOPE_CLOSE = frame(SCOPE, "close", 7);
    private static final StackTraceElement RUN_OPEN = frame("dev.drain.pool.Run", "open", 8);
    private static final StackTraceElement POOL_RUN = frame("dev.drain.pool.WorkerPool", "run", 9);
    private static final StackTraceElement BINDING_RUN = frame(BINDING, "doRun", 10);
    private static final StackTraceElement BINDING_RUN_LATER = frame(BINDING, "doRun", 11);
    private static final StackTraceElement VALUE_RUN = frame("java.lang.ScopedValue$Carrier", "run", 12);
    private static final StackTraceElement B = frame("app.Service", "b", 20);
    private static final StackTraceElement B_LATER = frame("app.Service", "b", 24);
    private static final StackTraceElement C = frame("app.Service", "c", 40);
    private static final StackTraceElement D_AT_B = frame("app.Service", "d", 24);
    private static final StackTraceElement A = frame("app.Service", "a", 30);
    private static final StackTraceElement A_ELSEWHERE = frame("app.Service", "a", 31);
    private static final StackTraceElement MAIN = frame("app.Main", "main", 1);

    /** The owner's stack at the open: {@code main} calls {@code a}, which calls {@code b}, which calls {@code run()}. */
    private static final List<StackTraceElement> OPENED_IN_B = List.of(RUN_OPEN, POOL_RUN, B, A, MAIN);
    /** The same, {@code b} running inside a binding that {@code a} made. */
    private static final List<StackTraceElement> OPENED_IN_A_BINDING = List.of(RUN_OPEN, POOL_RUN, B, BINDING_RUN, VALUE_RUN, A, MAIN);

    static Stream<Arguments> stacks() {
        return Stream.of(
                reading("no forced close: nothing parked in tryClose", OPENED_IN_B, false, PARK, B_LATER, A, MAIN),
                reading("the owner's thread ends (popAll), tryClose its innermost frame", OPENED_IN_B, true, TRY_CLOSE, POP_ALL, MAIN),
                reading("a popAll inside the tryClose, not under it, started no close", OPENED_IN_B, false, POP_ALL, TRY_CLOSE, A, MAIN),
                reading("a popForcefully inside the tryClose, not under it, started no close", OPENED_IN_B, false, POP, TRY_CLOSE, A, MAIN),
                reading("a popForcefully with nothing under it: a close this reading does not know", OPENED_IN_B, false, PARK, TRY_CLOSE, POP),
                reading("a close started by something else", OPENED_IN_B, false, PARK, TRY_CLOSE, POP, frame("app.Other", "x", 1), A, MAIN),
                reading("a binding made before the run ends, its own line moved on", OPENED_IN_A_BINDING, true,
                        PARK, TRY_CLOSE, POP, BINDING_RUN_LATER, VALUE_RUN, A, MAIN),
                reading("a binding made after the run ends", OPENED_IN_B, false,
                        PARK, TRY_CLOSE, POP, BINDING_RUN, VALUE_RUN, B_LATER, A, MAIN),
                reading("b closes a scope that encloses the run: b was running at the open", OPENED_IN_B, true,
                        PARK, TRY_CLOSE, POP, CONTAINER_CLOSE, FLOCK_CLOSE, SCOPE_CLOSE, B_LATER, A, MAIN),
                reading("c, entered after the open, closes a scope: a newer one", OPENED_IN_B, false,
                        PARK, TRY_CLOSE, POP, CONTAINER_CLOSE, SCOPE_CLOSE, C, B_LATER, A, MAIN),
                reading("a close whose every frame under it is the scopes' own", OPENED_IN_B, false,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, FLOCK_CLOSE, SCOPE_CLOSE),
                reading("the closer is the same method at the same depth, over a caller at another line", OPENED_IN_B, false,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, B_LATER, A_ELSEWHERE, MAIN),
                reading("the closer is another method at b's depth, over the same frames", OPENED_IN_B, false,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, D_AT_B, A, MAIN),
                reading("the closer is deeper now than any frame at the open", List.of(RUN_OPEN, A, MAIN), false,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, C, B_LATER, D_AT_B, A, MAIN),
                reading("a trace cut short (no main): b over a matches at some depth", OPENED_IN_B, true,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, B_LATER, A),
                reading("a trace cut short: the closer matches at no depth", OPENED_IN_B, false,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, C, A_ELSEWHERE),
                reading("a trace cut short: the closer is the open's deepest method, over a frame the open never had", OPENED_IN_B,
                        false, TRY_CLOSE, POP, CONTAINER_CLOSE, frame("app.Main", "main", 2), frame("app.Launcher", "start", 1)),
                reading("the closer is the open's innermost frame", List.of(B, A, MAIN), true,
                        TRY_CLOSE, POP, CONTAINER_CLOSE, B_LATER, A, MAIN));
    }

    private static Arguments reading(String what, List<StackTraceElement> atOpen, boolean reachesTheRun, StackTraceElement... now) {
        return Arguments.argumentSet(what, atOpen, now, reachesTheRun);
    }

    /** WP-20, decision 0054: each rule of the reading, and each edge of the stacks it reads. */
    @ParameterizedTest
    @MethodSource("stacks")
    void theReadingFollowsItsRules(List<StackTraceElement> atOpen, StackTraceElement[] now, boolean reachesTheRun) {
        ForcedClose reading = new ForcedClose(atOpen.toArray(StackTraceElement[]::new));
        assertThat(reading.reachesTheRun(now)).isEqualTo(reachesTheRun);
    }
}
