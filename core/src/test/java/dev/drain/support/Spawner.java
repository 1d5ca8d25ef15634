package dev.drain.support;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts the calls a test makes on other threads, on the test's {@link ThreadKind}, and makes sure
 * none outlives the test: after each test, any call still running is interrupted, waited for
 * (bounded), and reported as a failure. Register it as a field:
 * {@code @RegisterExtension final Spawner spawn = new Spawner();}.
 */
public final class Spawner implements AfterEachCallback {
    private ThreadKind kind = ThreadKind.PLATFORM;
    private final List<Call<?>> calls = new ArrayList<>();

    /** Makes later calls run on threads of {@code kind}; returns this spawner. */
    public Spawner use(ThreadKind kind) {
        this.kind = kind;
        return this;
    }

    /** Starts {@code body} on a new thread named {@code name}. */
    public <V> Call<V> call(String name, Call.Body<V> body) {
        Call<V> call = new Call<>(kind, name, body);
        calls.add(call);
        return call;
    }

    /** A body with no result. */
    @FunctionalInterface
    public interface Action {
        void run() throws Exception;
    }

    /** Starts {@code action} on a new thread named {@code name}; its result is {@code null}. */
    public Call<Void> run(String name, Action action) {
        return call(name, () -> {
            action.run();
            return null;
        });
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leftRunning = new ArrayList<>();
        for (Call<?> call : calls) {
            if (!call.isDone()) {
                leftRunning.add(call.thread().getName());
                call.thread().interrupt();
            }
        }
        for (Call<?> call : calls) {
            call.outcome(); // bounded: fails if the thread will not end even when interrupted
        }
        calls.clear();
        if (!leftRunning.isEmpty() && context.getExecutionException().isEmpty()) {
            throw new AssertionError("the test left these threads running: " + leftRunning);
        }
    }
}
