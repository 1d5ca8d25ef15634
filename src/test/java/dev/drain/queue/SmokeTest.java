package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SmokeTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** SQ-07: a graceful shutdown wakes a blocked getter, which throws QueueShutDown. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutdownWakesGetter(ThreadKind threads) {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        var getter = spawn.use(threads).call("getter", q::get);
        Waits.until("one getter waits", () -> q.waitingGetters() == 1);
        q.shutdown();
        getter.thrown(QueueShutDown.class);
        assertThat(q.waitingGetters()).isZero();
    }
}
