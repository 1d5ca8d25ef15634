/**
 * drain: graceful and emergency shutdown for concurrent work, on the JDK's structured
 * concurrency. The API is two packages: {@link dev.drain.queue} (a blocking queue with Python 3.13
 * {@code asyncio.Queue} shutdown semantics) and {@link dev.drain.pool} (a worker pool built on it).
 *
 * <p>Compiled with preview features of JDK 25 ({@code StructuredTaskScope}): a project that uses
 * this module runs, and runs its tests, with {@code --enable-preview} on JDK 25; its compiler needs
 * the flag only if its own code uses a preview API.
 *
 * <p>Two packages are compiled with the library but are not exported, and the library jar leaves
 * them out: {@code dev.drain.report}, the contract report (the project's main job), which runs
 * from the build's class folder ({@code ./contract-report}), never from the jar; and
 * {@code dev.drain.foils}, designs deliberately limited that the tests and the JShell scripts show
 * beside the real ones (the Python 3.12 fallback, {@code ClosingQueue}).
 */
module dev.drain {
    exports dev.drain.queue;
    exports dev.drain.pool;
    // What the pool and the adapters share when they call code they do not control (decision 0055).
    exports dev.drain.safe;

    // The pool's JDK Flight Recorder events (dev.drain.pool.PoolEvents).
    requires jdk.jfr;
    // Only the report needs it (HotSpotDiagnosticMXBean in dev.drain.report.JvmThreads), and the
    // report is not in the jar: needed to compile, not to run the library.
    requires static jdk.management;
    // Annotations only (@NullMarked, @Nullable, @GuardedBy): needed to compile, not to run.
    requires static transitive org.jspecify;
    requires static com.google.errorprone.annotations;
}
