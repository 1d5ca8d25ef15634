package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.ChildJvm;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** WP-20, WP-16: what only a whole process shows, each in a JVM of its own ({@link ChildJvm}). */
class WholeProcessTest {

    /**
     * WP-20: a program whose main thread takes one result and returns without closing the results
     * exits by itself, and a warning on standard error names the run and its owner.
     */
    @ParameterizedTest
    @EnumSource(WorkerPool.IntakeKind.class)
    void aProgramThatForgetsToCloseItsResultsExits(WorkerPool.IntakeKind intake) {
        ChildJvm.Ended ended = ChildJvm.run(List.of("--enable-preview"), ForgetfulMain.class, intake.name());
        assertThat(ended.exited()).as("the child exited by itself; it printed: %s %s", ended.out(), ended.err()).isTrue();
        assertThat(ended.status()).as("its exit status").isZero();
        assertThat(ended.out()).startsWith("took r");
        assertThat(ended.err()).contains("run forgetful abandoned", "thread \"main\"");
    }

    /** WP-16: without --enable-preview, build() fails at once with a message that names the flag. */
    @Test
    void withoutThePreviewFlagBuildSaysWhichFlag() {
        ChildJvm.Ended ended = ChildJvm.run(List.of(), PreviewProbeMain.class);
        assertThat(ended.exited()).isTrue();
        assertThat(ended.out()).startsWith("java.lang.UnsupportedOperationException: ")
                .contains("--enable-preview", "JDK 25");
    }
}
