package dev.drain;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The main job for now: the same queue shut down gracefully and immediately, side by side.
 * Three items are queued and one is taken (and not yet done) before the shutdown; then a consumer
 * drains what it can.
 */
public final class Demo {
    private Demo() {}

    /**
     * Prints the two shutdowns side by side.
     *
     * @param args ignored
     * @throws Exception if the queue does not behave as documented (it does)
     */
    public static void main(String[] args) throws Exception {
        List<String> graceful = run(false);
        List<String> immediate = run(true);
        PrintStream out = System.out;
        out.printf("%-58s | %s%n", "shutdown()  (graceful)", "shutdown(true)  (immediate)");
        out.println("-".repeat(58) + "-+-" + "-".repeat(58));
        for (int i = 0; i < Math.max(graceful.size(), immediate.size()); i++) {
            out.printf("%-58s | %s%n", i < graceful.size() ? graceful.get(i) : "",
                    i < immediate.size() ? immediate.get(i) : "");
        }
    }

    private static List<String> run(boolean immediate) throws Exception {
        List<String> lines = new ArrayList<>();
        ShutdownQueue<String> queue = new ShutdownQueue<>(0);
        for (String item : List.of("a", "b", "c")) {
            queue.putNowait(item);
        }
        String taken = queue.get();
        lines.add("put a, b, c; get -> " + taken);
        lines.add("before: " + queue);
        List<String> dropped = queue.shutdown(immediate);
        lines.add("shutdown(" + immediate + ") returned " + dropped);
        lines.add("after:  " + queue);
        try {
            queue.put("d");
        } catch (QueueShutDown e) {
            lines.add("put d -> QueueShutDown");
        }
        while (true) {
            try {
                lines.add("get -> " + queue.get());
                queue.taskDone();
            } catch (QueueShutDown e) {
                lines.add("get -> QueueShutDown");
                break;
            }
        }
        lines.add("unfinished: " + queue.unfinishedTasks() + " (the 'a' taken first)");
        queue.taskDone();
        lines.add("taskDone for a -> join() returns: " + queue.join(java.time.Duration.ZERO));
        return lines;
    }
}
