// 15: a metrics sink that fails. The sink is user code: it runs on a thread of the run's own (<pool>-metrics-n),
// and whatever it throws (an Exception, an InterruptedException with no interrupt, an Error) is counted in
// metricsRaised and otherwise ignored. Clauses: WP-8 (the sink may fail), WP-18 (callbacks throw), WP-15.

System.out.println("== 15 a failing metrics sink: counted, and nothing else changes ==");

// failing: a sink that throws on every call, in turn a RuntimeException, an InterruptedException (its thread
// was not interrupted), and an Error; it notes the thread it runs on.
Set<String> sinkThreads = ConcurrentHashMap.newKeySet();
AtomicInteger calls = new AtomicInteger();
MetricsSink failing = (event, detail) -> {
    sinkThreads.add(Thread.currentThread().getName().replaceAll("\\d+$", "<n>"));
    switch (calls.incrementAndGet() % 3) {
        case 0 -> throw new IllegalStateException("the metrics backend is down");
        case 1 -> throw new InterruptedException("thrown, but nobody interrupted this thread");
        default -> throw new AssertionError("an Error from the sink");
    }
};

{
    long raised = 0;
    for (MetricsSink sink : List.of((MetricsSink) (event, detail) -> { }, failing)) {
        String name = sink == failing ? "failing" : "quiet";
        var pool = WorkerPool.<Integer, Integer>builder(n -> n * n).workers(2).itemTimeout(BOUND)
                .metrics(sink).name("demo15-" + name).build();
        var ran = runToEnd(pool, List.of(1, 2, 3, 4, 5));
        raised = ran.stats().metricsRaised();
        System.out.println("  " + name + " sink: results (sorted) " + new TreeSet<>(ran.results()) + ", " + ran.end() +
                ", succeeded=" + ran.stats().succeeded() + " failed=" + ran.stats().failed() + " metricsRaised=" + raised);
    }
    System.out.println("  the failing sink was called " + calls.get() + " times, and threw every time;");
    System.out.println("  metricsRaised counts each call that threw: metricsRaised == calls is " + (raised == calls.get()));
    System.out.println("  it ran on " + sinkThreads + " only: never on a worker, an attempt, or the caller");
}

tryIt("15", "a sink that interrupts its own thread on every call: what changes in the run?",
        "var rude = WorkerPool.<Integer, Integer>builder(n -> n).workers(2).metrics((e, d) -> Thread.currentThread().interrupt()).name(\"rude\").build();",
        "var r = runToEnd(rude, List.of(1, 2, 3)); System.out.println(r.end() + \", succeeded=\" + r.stats().succeeded() + \", metricsRaised=\" + r.stats().metricsRaised());");

/exit
