// 01: ShutdownQueue is Python 3.13's asyncio.Queue for Java threads; one thread here, and the blocking
// forms are called only when they can finish at once. Clauses: SQ-01 (orders, bounds), SQ-02, SQ-03
// (the Nowait forms), SQ-10 (taskDone), SQ-11 (join), SQ-15 (timed forms), SQ-17 (str(queue)).

System.out.println("== 01 queue basics: put/get, the Nowait forms, taskDone/join, str(queue) ==");

var q = new ShutdownQueue<Integer>(2); // asyncio.Queue(maxsize=2): at most two items

{
    System.out.println("A bounded FIFO queue; toString() prints what Python's str(q) prints:");
    show("q", () -> q);
    show("q.putNowait(1)", () -> { q.putNowait(1); return null; });
    show("q.put(2)  (there is room: no wait)", () -> { q.put(2); return null; });
    show("q", () -> q);
    show("q.full()", () -> q.full());
    show("q.putNowait(3)", () -> { q.putNowait(3); return null; });
    show("q.put(3, Duration.ZERO)", () -> { q.put(3, Duration.ZERO); return null; });
}

{
    System.out.println("Items come out first-in-first-out; getting one does not finish its task:");
    show("q.get()  (there is an item: no wait)", () -> q.get());
    show("q.getNowait()", () -> q.getNowait());
    show("q.getNowait()", () -> q.getNowait());
    show("q.get(Duration.ZERO)", () -> q.get(Duration.ZERO));
    show("q", () -> q);
}

{
    System.out.println("Each put counts an unfinished task; taskDone() finishes one; join() waits for zero:");
    show("q.unfinishedTasks()", () -> q.unfinishedTasks());
    show("q.join(Duration.ZERO)", () -> q.join(Duration.ZERO));
    show("q.taskDone()", () -> { q.taskDone(); return null; });
    show("q.taskDone()", () -> { q.taskDone(); return null; });
    show("q.join()  (the count is 0: no wait)", () -> { q.join(); return null; });
    show("q.taskDone()  (one too many)", () -> { q.taskDone(); return null; });
}

{
    System.out.println("The other two orders, each given 2, 3, 1 (maxsize 0: unbounded):");
    var lifo = ShutdownQueue.<Integer>lifo(0);     // asyncio.LifoQueue()
    var prio = ShutdownQueue.<Integer>priority(0); // asyncio.PriorityQueue()
    for (int i : List.of(2, 3, 1)) {
        lifo.putNowait(i);
        prio.putNowait(i);
    }
    show("lifo", () -> lifo);
    show("prio  (stored as Python's heapq stores it)", () -> prio);
    show("three lifo.get()", () -> List.of(lifo.get(), lifo.get(), lifo.get()));
    show("three prio.get()", () -> List.of(prio.get(), prio.get(), prio.get()));
}

tryIt("01", "q is empty again. After two puts, what does str(q) show, and what does a third putNowait do?",
        "show(\"q after putNowait(5), putNowait(6)\", () -> { q.putNowait(5); q.putNowait(6); return q; });",
        "show(\"q.putNowait(7)\", () -> { q.putNowait(7); return null; });");

/exit
