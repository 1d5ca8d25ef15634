package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.ApiScan;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * WP-11: every public signature of the library says what it means: no raw types and no bare
 * {@code Object}. The scan itself is {@link ApiScan}, which the contract report also runs, over the
 * library's packages and its own (module {@code report/}).
 */
class ApiSignatureTest {

    /**
     * The packages scanned here, each named by one of its classes: the library's three, and the two
     * the core's tests use without exporting them, held to the same rule: the foils and the measure.
     */
    static final List<Class<?>> PACKAGES = List.of(dev.drain.queue.ShutdownQueue.class, WorkerPool.class,
            dev.drain.safe.SafeText.class, dev.drain.foils.ClosingQueue.class, ApiScan.class);

    /** WP-11: no public signature in dev.drain.queue, dev.drain.pool, dev.drain.safe, dev.drain.foils or dev.drain.measure uses a raw type or a bare Object. */
    @Test
    void publicSignaturesHaveNoRawTypesAndNoBareObject() {
        assertThat(ApiScan.publicTypes(PACKAGES)).extracting(Class::getSimpleName)
                .contains("ShutdownQueue", "WorkerPool", "Results", "PoolFailure", "ItemContext", "SafeText",
                        "Uninterruptibly", "Fatal", "ClosingQueue", "JvmThreads", "JsonReader");
        assertThat(ApiScan.problems(PACKAGES)).isEmpty();
    }

    /** A public API with the mistakes the scan exists to catch. */
    @SuppressWarnings({"rawtypes", "unused"})
    public static final class Careless {
        public Object anything;

        public Careless(Map options) {
            this.anything = options;
        }

        public List<Object> items() {
            return List.of();
        }

        public void consume(Iterator<? super Object> source) {}

        @Override
        public boolean equals(Object other) {
            return other == this; // exempt: the language fixes this signature
        }

        @Override
        public int hashCode() {
            return 1;
        }
    }

    /** WP-11: the scan finds raw types and bare Object in fields, constructors, parameters and returns, and exempts equals. */
    @Test
    void theScanCatchesRawTypesAndBareObject() {
        assertThat(ApiScan.problems(Careless.class)).containsExactlyInAnyOrder(
                "Careless.anything: bare Object",
                "Careless.new parameter: raw Map",
                "Careless.items return: bare Object",
                "Careless.consume parameter: bare Object");
    }
}
