package dev.drain.pool;

/**
 * A program that builds a pool, run by {@link WholeProcessTest} in a JVM started without
 * {@code --enable-preview} (WP-16): it prints what {@code build()} threw, or {@code built}.
 */
final class PreviewProbeMain {
    private PreviewProbeMain() {}

    public static void main(String[] args) {
        try {
            WorkerPool.<Integer, Integer>builder(n -> n).build();
            System.out.println("built");
        } catch (RuntimeException e) {
            System.out.println(e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
