// 12: retries. An attempt that throws a retryable type (subtypes included) is retried, up to maxRetries times,
// each retry a new attempt with ItemContext.attempt() one higher; TimeoutException is retried only if listed.
// Clauses: WP-5 (retry policy), WP-3 (per-item timeout), WP-6 (permanent failures), WP-9 (ItemContext).

System.out.println("== 12 retries: retryable IOException, maxRetries, attempts, and a retryable timeout ==");

{
    System.out.println("retryable(IOException.class), maxRetries(2): at most 3 attempts per item. flaky throws");
    System.out.println("FileNotFoundException (a subtype) once, broken IOException every time, bug IllegalStateException:");
    var allStarted = new CountDownLatch(4); // every item in flight before any fails (a failure stops intake: WP-6)
    Map<String, List<Integer>> attempts = new ConcurrentSkipListMap<>();
    Handler<String, String> handler = item -> {
        int attempt = ItemContext.current().attempt();
        attempts.computeIfAbsent(item, k -> new CopyOnWriteArrayList<>()).add(attempt);
        allStarted.countDown();
        await("every item in flight", allStarted);
        return switch (item) {
            case "flaky" -> { if (attempt < 2) throw new FileNotFoundException("not yet"); yield "flaky on attempt " + attempt; }
            case "broken" -> throw new IOException("down, attempt " + attempt);
            case "bug" -> throw new IllegalStateException("a bug: not retryable");
            default -> item + " on attempt " + attempt;
        };
    };
    var pool = WorkerPool.<String, String>builder(handler).workers(4).itemTimeout(BOUND)
            .retryable(IOException.class).maxRetries(2).name("demo12").build();
    var ran = runToEnd(pool, List.of("ok", "flaky", "broken", "bug"));
    System.out.println("  results (completion order): " + ran.results());
    attempts.forEach((item, seen) -> System.out.println("  " + item + ": ItemContext.attempt() was " + seen));
    ran.outcome().failures().stream().sorted(Comparator.comparing(f -> f.item())).forEach(f -> System.out.println(
            "  failed: " + f.item() + " after " + f.attempts() + " attempt(s), " + f.cause().getClass().getSimpleName()));
    System.out.println("  stats: retried=" + ran.stats().retried() + " succeeded=" + ran.stats().succeeded() +
            " failed=" + ran.stats().failed() + "; the run " + ran.end().split(":")[0]);
}

// slowFirst: a handler whose first attempt outlives any timeout (only an interrupt ends it); the second is quick.
Handler<Integer, String> slowFirst = item -> {
    if (ItemContext.current().attempt() == 1) awaitInterrupt();
    return "item " + item + " on attempt " + ItemContext.current().attempt();
};

{
    System.out.println("retryable(TimeoutException.class), maxRetries(1): a timed-out attempt is retried:");
    var pool = WorkerPool.<Integer, String>builder(slowFirst).workers(1).itemTimeout(Duration.ofMillis(100))
            .retryable(TimeoutException.class).maxRetries(1).name("demo12-timeout").build();
    var ran = runToEnd(pool, List.of(7));
    System.out.println("  results: " + ran.results() + "; stats: timedOut=" + ran.stats().timedOut() +
            " retried=" + ran.stats().retried() + "; the run " + ran.end());
}

tryIt("12", "the same slowFirst handler, but retryable() lists only IOException: is the timeout retried?",
        "var strict = WorkerPool.<Integer, String>builder(slowFirst).workers(1).itemTimeout(Duration.ofMillis(100)).retryable(IOException.class).maxRetries(1).name(\"strict\").build();",
        "System.out.println(runToEnd(strict, List.of(7)).end());");

/exit
