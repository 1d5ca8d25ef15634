// 07: the Python 3.12 fallback, ClosingQueue (a foil, in dev.drain.foils: not part of the library): a closed
// flag, one end marker per consumer queued behind the items, and blocked producers released by interrupt;
// beside ShutdownQueue, what 3.13 removes.
// specs/fallback-312.md clause by clause; here SQ-07 (close blocks), SQ-09 (a second close), SQ-04, SQ-05.

System.out.println("== 07 the Python 3.12 fallback: ClosingQueue beside ShutdownQueue ==");

{
    System.out.println("Room for 1 item, 1 consumer. A producer waits for room; close() interrupts it, then itself waits:");
    var cq = new ClosingQueue<Integer>(1, 1);
    cq.put(1);
    var producer = Call.start("producer  (waits in put(2))", () -> { cq.put(2); return null; });
    until("the producer waits for room", () -> parked(producer.thread()));
    var closer = Call.start("closer  (close() on a full queue)", () -> { cq.close(); return null; });
    System.out.println(producer.end() + "  (released by an interrupt: ArrayBlockingQueue has no other way)");
    until("the closer waits for room for its marker", () -> parked(closer.thread()));
    show("closer.running(200 ms)  (close() blocks)", () -> closer.running(Duration.ofMillis(200)));
    show("cq.get()  (the consumer makes room)", () -> cq.get());
    System.out.println(closer.end());
    show("cq.get()  (its end marker)", () -> cq.get());
    var again = Call.start("consumer asks again after its marker", () -> cq.get());
    show("again.running(200 ms)  (it waits forever)", () -> again.running(Duration.ofMillis(200)));
    again.thread().interrupt(); // only an interrupt ends that wait
    System.out.println(again.end());
}

{
    System.out.println("The same story on a ShutdownQueue(1): shutdown() never blocks, wakes the producer, and stays shut:");
    var sq = new ShutdownQueue<Integer>(1);
    sq.put(1);
    var producer = Call.blocked("producer  (waits in put(2))", sq::waitingPutters, () -> { sq.put(2); return null; });
    show("sq.shutdown()  (returns at once, on a full queue)", () -> { sq.shutdown(); return null; });
    System.out.println(producer.end());
    show("sq.get()", () -> sq.get());
    show("sq.get()", () -> sq.get());
    show("sq.get()  (asking again: the same answer, no wait)", () -> sq.get());
}

{
    System.out.println("A second close() is not a no-op: it queues a second set of markers, meant for nobody:");
    var twice = new ClosingQueue<Integer>(4, 1);
    show("twice.close(); twice.close()", () -> { twice.close(); twice.close(); return null; });
    show("twice.get()  (the consumer's marker)", () -> twice.get());
    show("twice.get()  (a marker for a consumer that does not exist)", () -> twice.get());
    var sq = new ShutdownQueue<Integer>(4);
    show("sq.shutdown(); sq.shutdown(); sq", () -> { sq.shutdown(); sq.shutdown(); return sq; });
}

System.out.println("""
        What 3.13 removes: close() can block; markers must match the consumers exactly; a producer is reached only
        by an interrupt; a second close or a second get after the end goes wrong. shutdown() is one atomic step.""");

tryIt("07", "three consumers, room for two items: close() has three markers to queue. Does it return? And after one get()?",
        "var three = new ClosingQueue<Integer>(2, 3);",
        "var closing = Call.start(\"close() with room for 2 of 3 markers\", () -> { three.close(); return null; });",
        "System.out.println(\"still closing after 200 ms: \" + closing.running(Duration.ofMillis(200)));",
        "show(\"three.get()\", () -> three.get()); System.out.println(closing.end());");

/exit
