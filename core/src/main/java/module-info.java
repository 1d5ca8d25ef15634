/**
 * drain: graceful and emergency shutdown for concurrent work, on the JDK's structured
 * concurrency. The API is three packages: {@link dev.drain.queue} (a blocking queue with Python 3.13
 * {@code asyncio.Queue} shutdown semantics), {@link dev.drain.pool} (a worker pool built on it) and
 * {@link dev.drain.safe} (the policies the pool and its adapters share when they call user code).
 *
 * <p>Compiled with preview features of JDK 25 ({@code StructuredTaskScope}): a project that uses
 * this module runs, and runs its tests, with {@code --enable-preview} on JDK 25; its compiler needs
 * the flag only if its own code uses a preview API.
 *
 * <p>One package is compiled with the library but is not exported, and the library jar leaves it
 * out: {@code dev.drain.foils}, designs deliberately limited that the tests and the JShell scripts
 * show beside the real ones (the Python 3.12 fallback, {@code ClosingQueue}). The contract report,
 * the project's main job, is not in this module: it is a module of its own in the build
 * ({@code report/}, run by {@code ./contract-report}; decision 0050).
 */
module dev.drain {
    exports dev.drain.queue;
    exports dev.drain.pool;
    // What the pool and the adapters share when they call code they do not control (decision 0055).
    exports dev.drain.safe;

    // The pool's JDK Flight Recorder events (dev.drain.pool.PoolEvents).
    requires jdk.jfr;
    // Annotations only (@NullMarked, @Nullable, @GuardedBy): needed to compile, not to run.
    requires static transitive org.jspecify;
    requires static com.google.errorprone.annotations;
}
