package dev.drain.queue;

import dev.drain.support.Bounds;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Replays one CPython-recorded scenario against a queue (a {@link ShutdownQueue}, or one of
 * {@link BrokenQueues} to show that the traces catch it), following the step model
 * of {@code specs/traces/FORMAT.md}: one thread per task, each step run until quiescent, and after
 * each step the completed calls and the queue's state compared with what CPython 3.13 recorded.
 *
 * <p>Quiescence is detected without sleeping: every task the replayer has given a call to is
 * either reported back (its call completed) or counted among the queue's waiters (in the getter
 * or putter line, or waiting in join) and parked. A woken thread has left its line and is not
 * counted, so the replayer keeps waiting until it completes or waits again.
 */
final class TraceReplayer implements AutoCloseable {

    /** A recorded scenario: the queue, the steps, and what CPython recorded after each step. */
    record Scenario(String name, String kind, int maxsize, int tasks,
                    List<Map<String, @Nullable Object>> steps, List<Map<String, @Nullable Object>> expected) {

        @SuppressWarnings("unchecked") // the corpus's shape is checked by the recorder
        static Scenario from(Map<String, @Nullable Object> json) {
            return new Scenario(field(json, "name", String.class), field(json, "kind", String.class),
                    Math.toIntExact(field(json, "maxsize", Long.class)),
                    Math.toIntExact(field(json, "tasks", Long.class)),
                    field(json, "steps", List.class), field(json, "expected", List.class));
        }

        private static <V> V field(Map<String, @Nullable Object> json, String key, Class<V> type) {
            return type.cast(Objects.requireNonNull(json.get(key), key));
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** What one step produced: the completed calls, in the trace's order, and the state after it. */
    record StepResult(List<Map<String, @Nullable Object>> completed, Map<String, @Nullable Object> state) {}

    private static final String STOP = "stop";
    private static final Map<String, @Nullable Object> STOP_COMMAND = Map.of("op", STOP);

    private final QueueUnderTest<Integer> queue;
    private final List<Worker> workers = new ArrayList<>();
    private final ConcurrentLinkedQueue<Map<String, @Nullable Object>> reports = new ConcurrentLinkedQueue<>();

    /** One task: a thread that runs the calls the replayer hands it, one at a time. */
    private final class Worker {
        final long id;
        final SynchronousQueue<Map<String, @Nullable Object>> inbox = new SynchronousQueue<>();
        final Thread thread;
        /** The call this task is inside, or null when idle; read and written by the replayer only. */
        @Nullable String busyIn;

        Worker(long id, ThreadKind threads) {
            this.id = id;
            this.thread = threads.start("task-" + id, this::loop);
        }

        private void loop() {
            while (true) {
                Map<String, @Nullable Object> command;
                try {
                    command = inbox.take();
                } catch (InterruptedException e) {
                    // Only a queue call should ever see an interrupt: report the leak and go on.
                    reports.add(Map.of("by", id, "op", "interrupt outside a queue call"));
                    continue;
                }
                if (STOP.equals(command.get("op"))) {
                    return;
                }
                reports.add(execute(queue, id, command));
            }
        }
    }

    TraceReplayer(Scenario scenario, ThreadKind threads) {
        this(scenario, threads, QueueUnderTest.of(switch (scenario.kind()) {
            case "fifo" -> ShutdownQueue.<Integer>fifo(scenario.maxsize());
            case "lifo" -> ShutdownQueue.<Integer>lifo(scenario.maxsize());
            case "priority" -> ShutdownQueue.<Integer>priority(scenario.maxsize());
            default -> throw new IllegalArgumentException("unknown kind " + scenario.kind());
        }));
    }

    /** Replays {@code scenario} against {@code queue}, which must be new and of the scenario's kind. */
    TraceReplayer(Scenario scenario, ThreadKind threads, QueueUnderTest<Integer> queue) {
        this.queue = queue;
        for (long id = 0; id < scenario.tasks(); id++) {
            workers.add(new Worker(id, threads));
        }
    }

    /** Runs one step until quiescent and returns what it produced. */
    @SuppressWarnings("unchecked")
    StepResult step(Map<String, @Nullable Object> step) throws InterruptedException {
        List<Map<String, @Nullable Object>> driver = new ArrayList<>();
        Map<Long, Map<String, @Nullable Object>> byTask = new TreeMap<>();
        if (step.get("batch") instanceof List<?> batch) {
            List<Worker> cancelled = new ArrayList<>();
            queue.atomically(() -> { // a batch is asyncio's synchronous run between two awaits: one step (SQ-21)
                for (Object item : batch) {
                    Map<String, @Nullable Object> action = (Map<String, @Nullable Object>) item;
                    if (action.get("cancel") instanceof Long task) {
                        cancelled.add(cancelInsideLock(worker(task)));
                    } else {
                        driver.add(execute(queue, "driver", action));
                    }
                }
            });
            for (Worker w : cancelled) {
                awaitReport(w, byTask);
            }
        } else if (step.get("cancel") instanceof Long task) {
            Worker w = worker(task);
            w.thread.interrupt();
            awaitReport(w, byTask);
        } else {
            Worker w = worker((Long) Objects.requireNonNull(step.get("task")));
            w.busyIn = (String) step.get("op");
            if (!w.inbox.offer(step, Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError("task-" + w.id + " did not take its command");
            }
        }
        awaitQuiescence(byTask);
        List<Map<String, @Nullable Object>> completed = new ArrayList<>(driver);
        completed.addAll(byTask.values());
        return new StepResult(completed, state());
    }

    /**
     * Interrupts a blocked task from inside {@code atomically}. If it waits in the getter or putter
     * line, waits (bounded) until the interrupt has reached it, so that a wake-up later in the same
     * batch skips it, as asyncio skips a cancelled future.
     */
    private Worker cancelInsideLock(Worker w) {
        w.thread.interrupt();
        Waits.until("task-" + w.id + " notices its interrupt", () -> !queue.isParkedInLine(w.thread));
        return w;
    }

    private Worker worker(long task) {
        return workers.get(Math.toIntExact(task));
    }

    /** Moves the reports that have arrived into {@code byTask}, marking their tasks idle. */
    private void collect(Map<Long, Map<String, @Nullable Object>> byTask) {
        for (Map<String, @Nullable Object> report; (report = reports.poll()) != null; ) {
            long id = (Long) Objects.requireNonNull(report.get("by"));
            if (byTask.put(id, report) != null) {
                throw new AssertionError("task-" + id + " completed two calls in one step");
            }
            worker(id).busyIn = null;
        }
    }

    private void awaitReport(Worker w, Map<Long, Map<String, @Nullable Object>> byTask) {
        Waits.until("task-" + w.id + " reports its cancelled call", () -> {
            collect(byTask);
            return byTask.containsKey(w.id);
        });
    }

    private void awaitQuiescence(Map<Long, Map<String, @Nullable Object>> byTask) {
        Waits.until("every task is idle or blocked", () -> {
            collect(byTask);
            List<Worker> busy = workers.stream().filter(w -> w.busyIn != null).toList();
            int waiting = queue.waitingGetters() + queue.waitingPutters() + queue.waitingJoiners();
            return waiting == busy.size()
                    && busy.stream().allMatch(w -> w.thread.getState() == Thread.State.WAITING)
                    && reports.isEmpty();
        });
    }

    private Map<String, @Nullable Object> state() {
        Map<String, @Nullable Object> blocked = new TreeMap<>(Comparator.comparingLong(Long::parseLong));
        for (Worker w : workers) {
            if (w.busyIn != null) {
                blocked.put(Long.toString(w.id), w.busyIn);
            }
        }
        Map<String, @Nullable Object> state = new LinkedHashMap<>();
        state.put("blocked", blocked);
        state.put("getters", (long) queue.waitingGetters());
        state.put("items", longs(queue.itemsInGetOrder()));
        state.put("putters", (long) queue.waitingPutters());
        state.put("qsize", (long) queue.qsize());
        state.put("repr", queue.repr());
        state.put("shutdown", queue.isShutdown());
        state.put("unfinished", (long) queue.unfinishedTasks());
        return state;
    }

    /** Ends every task: blocked ones are interrupted, then all are told to stop and joined. */
    @Override
    public void close() {
        for (Worker w : workers) {
            if (w.busyIn != null) {
                w.thread.interrupt();
            }
        }
        for (Worker w : workers) {
            Waits.until("task-" + w.id + " takes its stop command", () -> w.inbox.offer(STOP_COMMAND));
            Waits.until("task-" + w.id + " ends", () -> !w.thread.isAlive());
        }
    }

    /** Runs one queue call as the trace describes it and reports it in the trace's shape. */
    static Map<String, @Nullable Object> execute(QueueUnderTest<Integer> q, Object by, Map<String, @Nullable Object> action) {
        String op = (String) Objects.requireNonNull(action.get("op"));
        Map<String, @Nullable Object> entry = new LinkedHashMap<>();
        entry.put("by", by);
        entry.put("op", op);
        try {
            Object value = switch (op) {
                case "put" -> {
                    q.put(item(action));
                    yield null;
                }
                case "put_nowait" -> {
                    q.putNowait(item(action));
                    yield null;
                }
                case "get" -> (long) q.get();
                case "get_nowait" -> (long) q.getNowait();
                case "task_done" -> {
                    q.taskDone();
                    yield null;
                }
                case "join" -> {
                    q.join();
                    yield null;
                }
                case "shutdown" -> {
                    boolean immediate = (Boolean) Objects.requireNonNull(action.get("immediate"));
                    List<Integer> drained = q.shutdown(immediate);
                    if (immediate) {
                        entry.put("drained", longs(drained));
                    }
                    yield null;
                }
                case "qsize" -> (long) q.qsize();
                case "empty" -> q.empty();
                case "full" -> q.full();
                default -> throw new IllegalArgumentException("unknown op " + op);
            };
            entry.put("value", value);
        } catch (QueueShutDown e) {
            entry.put("raises", "QueueShutDown");
        } catch (QueueEmpty e) {
            entry.put("raises", "QueueEmpty");
        } catch (QueueFull e) {
            entry.put("raises", "QueueFull");
        } catch (InterruptedException e) {
            entry.put("raises", "Cancelled");
        } catch (IllegalStateException e) {
            entry.put("raises", "taskDone() called too many times".equals(e.getMessage())
                    ? "TooManyTaskDone" : e.toString());
        }
        return entry;
    }

    private static int item(Map<String, @Nullable Object> action) {
        return Math.toIntExact((Long) Objects.requireNonNull(action.get("item")));
    }

    private static List<Long> longs(List<Integer> items) {
        return items.stream().map(Integer::longValue).toList();
    }
}
