package dev.drain.support;

/** The two kinds of thread every thread-using test runs on. */
public enum ThreadKind {
    PLATFORM,
    VIRTUAL;

    /** Starts {@code task} on a new thread of this kind, named {@code name}. */
    public Thread start(String name, Runnable task) {
        return switch (this) {
            case PLATFORM -> Thread.ofPlatform().name(name).daemon(true).start(task);
            case VIRTUAL -> Thread.ofVirtual().name(name).start(task);
        };
    }
}
