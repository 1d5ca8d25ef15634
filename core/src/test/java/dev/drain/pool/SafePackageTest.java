package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.safe.SafeText;
import dev.drain.safe.Uninterruptibly;
import dev.drain.support.Bounds;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Decision 0055: the supported package {@code dev.drain.safe} keeps its promises to a careless
 * caller: text is never {@code null}, and a wait takes any timeout.
 */
class SafePackageTest {
    /** A value whose toString returns null, as a careless toString may. */
    private static final class NullText {
        @Override
        @SuppressWarnings({"NullAway", "ToStringReturnsNull"}) // the point: a toString that breaks its own contract
        public String toString() {
            return null;
        }
    }

    /**
     * Decision 0055, SafeText.of ("text from a value whose toString may throw"; the package is
     * {@code @NullMarked}, so its String is never null): a value whose {@code toString} returns
     * null still gives text, as String.valueOf gives "null" for a null value.
     */
    @Test
    void safeTextOfAValueWhoseToStringReturnsNullIsText() {
        String text = SafeText.of(new NullText());
        assertThat(text).as("SafeText.of of a toString() that returned null").isNotNull();
        assertThat(SafeText.cut(text, 10)).isNotNull();
    }

    /** Decision 0055, SafeText.built: a detail that builds null is still text, never null. */
    @Test
    @SuppressWarnings("NullAway") // the point: a supplier that breaks its own contract
    void safeTextBuiltOfADetailThatBuildsNullIsText() {
        assertThat(SafeText.built(() -> null)).as("SafeText.built of a supplier that returned null").isNotNull();
    }

    /**
     * Decision 0055, Uninterruptibly.join(thread, timeout) ("waits until the thread is no longer
     * alive, or timeout has passed"): a timeout too long to count in nanoseconds is still a
     * timeout, as Thread.join(Duration) takes it; here the thread ends first.
     */
    @Test
    void aTimedJoinTakesAnyTimeout() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        Thread thread = Thread.ofPlatform().daemon(true).start(() -> {
            try {
                boolean _ = release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            release.countDown();
            assertThat(Uninterruptibly.join(thread, Duration.ofSeconds(Long.MAX_VALUE))).isTrue();
        } finally {
            release.countDown();
            assertThat(thread.join(Bounds.WAIT)).isTrue();
        }
    }
}
