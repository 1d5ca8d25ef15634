// 09: context isolation. Each attempt runs with its own ItemContext(item, attempt, worker), bound
// through a ScopedValue and read with ItemContext.current(). A ScopedValue the handler binds or
// rebinds itself, or a ThreadLocal it sets, is never seen by another item: each attempt runs on a
// fresh thread, and a binding ends with the call that made it. Two items meet at a barrier, so both
// are in flight at once when they look.
// Clauses: WP-9 (context isolation), WP-10 (no leaks).

System.out.println("== 09 context isolation: ItemContext, a ScopedValue, a ThreadLocal; two items at a barrier ==");

ScopedValue<String> tag = ScopedValue.newInstance(); // the handler binds it per item, and rebinds it
ThreadLocal<String> local = new ThreadLocal<>();     // the handler sets it per item

{
    CyclicBarrier bothInFlight = new CyclicBarrier(2);
    Map<Integer, String> seen = new ConcurrentSkipListMap<>();
    Handler<Integer, Integer> handler = item -> {
        local.set("local-" + item);
        return ScopedValue.where(tag, "tag-" + item).call(() -> {
            // A rebinding: for one nested call tag is "inner-<item>"; after it, "tag-<item>" again.
            String inner = ScopedValue.where(tag, "inner-" + item).call(() -> tag.get());
            bothInFlight.await(5, TimeUnit.SECONDS); // both items are now running, side by side
            ItemContext<?> context = ItemContext.current();
            seen.put(item, "ItemContext {item=" + context.item() + " attempt=" + context.attempt() + "}, " +
                    "tag " + inner + " then " + tag.get() + ", local " + local.get());
            return item;
        });
    };
    WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(handler)
            .workers(2)
            .itemTimeout(Duration.ofSeconds(5))
            .name("demo09")
            .build();

    try (Results<Integer, Integer> results = pool.run(List.of(0, 1))) {
        while (results.hasNext()) {
            results.next();
        }
    }
    System.out.println("What each item saw, with both in flight (after the barrier):");
    seen.forEach((item, what) -> System.out.println("  item " + item + ": " + what));
    System.out.println("And on the consumer's thread, outside any handler:");
    System.out.println("  ItemContext.find() = " + ItemContext.find() + ", tag.isBound() = " + tag.isBound() +
            ", local.get() = " + local.get());
    System.out.println("  pool.liveThreads() after close(): " + pool.liveThreads());
}

/exit
