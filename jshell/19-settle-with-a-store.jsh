// 19: durable compensation in miniature. Items that come from a store (a job table, a broker) must be settled
// with it: acknowledged when done, kept as dead letters when they fail for good, released when the run gives them
// up. Acknowledging on take loses every item an abort drops; a Settler settles exactly what the books record, so
// the next run gets the rest again. Clauses: WP-22, WP-2, WP-12.

System.out.println("== 19 settle with the store, not on take ==");

// A store in miniature: a job is READY, CLAIMED (by a run), DONE or DEAD. A job table keeps the same four
// states in a row per job; here a sorted map does.
enum JobState { READY, CLAIMED, DONE, DEAD }

class Store {
    final Map<Integer, JobState> jobs = new ConcurrentSkipListMap<>();

    Store(int n) {
        for (int i = 0; i < n; i++) {
            jobs.put(i, JobState.READY);
        }
    }

    /** The ready jobs, as a run's source: each job the run pulls is DONE at once (ackOnTake) or CLAIMED. */
    Iterator<Integer> take(boolean ackOnTake) {
        Iterator<Integer> ready = in(JobState.READY).iterator();
        return new Iterator<>() {
            public boolean hasNext() { return ready.hasNext(); }
            public Integer next() {
                Integer job = ready.next();
                jobs.put(job, ackOnTake ? JobState.DONE : JobState.CLAIMED);
                return job;
            }
        };
    }

    /** Settles what the run's books recorded: a success is DONE, a failure DEAD, a released job READY again. */
    Settler<Integer> settler() {
        return batch -> {
            for (Settlement<Integer> s : batch) {
                jobs.put(s.item(), switch (s) {
                    case Settlement.Succeeded<Integer> done -> JobState.DONE;
                    case Settlement.Failed<Integer> failed -> JobState.DEAD;
                    case Settlement.Released<Integer> released -> JobState.READY;
                    case Settlement.Deferred<Integer> deferred -> JobState.READY; // only with deferRetriesLongerThan (WP-29)
                });
            }
        };
    }

    SortedSet<Integer> in(JobState state) {
        SortedSet<Integer> found = new TreeSet<>();
        jobs.forEach((job, now) -> { if (now == state) found.add(job); });
        return found;
    }

    String states() {
        return "DONE " + in(JobState.DONE) + ", READY " + in(JobState.READY) + ", CLAIMED " + in(JobState.CLAIMED)
                + ", DEAD " + in(JobState.DEAD);
    }
}

// The same run twice: 10 jobs, 2 workers, an intake of 3. Jobs 0 and 1 finish at once; the others wait until
// interrupted. Once both workers are stuck on 2 and 3, the intake holds 4, 5, 6 and the producer holds 7, the run
// is aborted: 8 jobs pulled, 2 succeeded, 2 cancelled, 4 discarded, and 8 and 9 never pulled.
Handler<Integer, Integer> slowAfterTwo = job -> {
    if (job >= 2) {
        awaitInterrupt(); // only the abort's interrupt ends it
    }
    return job;
};

<T, R> RunOutcome<T> abortAfter(WorkerPool<T, R> pool, Iterator<T> source, long pulled, long succeeded) {
    Results<T, R> results = pool.run(source);
    try (results) {
        until(pulled + " pulled, " + succeeded + " succeeded",
                () -> results.stats().pulled() == pulled && results.stats().succeeded() == succeeded);
        pool.abort();
        while (results.hasNext()) {
            results.next();
        }
    } catch (PoolAborted e) {
        // the iteration's end: what the abort left undone is in the outcome too
    }
    return results.outcome().orElseThrow();
}

{
    Store store = new Store(10);
    var pool = WorkerPool.<Integer, Integer>builder(slowAfterTwo).workers(2).queueSize(3).itemTimeout(BOUND)
            .name("demo19-wrong").build();
    RunOutcome<Integer> outcome = abortAfter(pool, store.take(true), 8, 2);
    System.out.println("Wrong: acknowledge on take, then abort()");
    System.out.println("  the run: discarded " + new TreeSet<>(outcome.discarded()) + ", cancelled "
            + new TreeSet<>(outcome.cancelled()));
    System.out.println("  the store: " + store.states());
    SortedSet<Integer> lost = new TreeSet<>(outcome.discarded());
    lost.addAll(outcome.cancelled());
    System.out.println("  DONE in the store and never finished (lost): " + lost);
}

{
    Store store = new Store(10);
    var pool = WorkerPool.<Integer, Integer>builder(slowAfterTwo).workers(2).queueSize(3).itemTimeout(BOUND)
            .settler(store.settler()).name("demo19-right").build();
    RunOutcome<Integer> outcome = abortAfter(pool, store.take(false), 8, 2);
    System.out.println("Right: claim on take, settle through a Settler, then abort()");
    System.out.println("  the run: " + outcome.getClass().getSimpleName() + ", discarded "
            + new TreeSet<>(outcome.discarded()) + ", cancelled " + new TreeSet<>(outcome.cancelled()));
    System.out.println("  the store once the run ended: " + store.states());

    // The next run takes what is READY again: the released jobs and the ones never pulled (redelivery).
    var again = WorkerPool.<Integer, Integer>builder(job -> job).workers(2).queueSize(3).itemTimeout(BOUND)
            .settler(store.settler()).name("demo19-again").build();
    Ran<Integer, Integer> second = runToEnd(again, () -> store.take(false));
    System.out.println("  the next run handled (sorted) " + new TreeSet<>(second.results()) + ", " + second.end());
    System.out.println("  the store: " + store.states());
}

tryIt("19", "in the next run, let job 4 fail for good (throw an exception): what state does it end in, and which"
                + " jobs are still READY afterwards (WP-6 stops the intake at the first permanent failure)?",
        "Store s = new Store(10);",
        "var p = WorkerPool.<Integer, Integer>builder(j -> { if (j == 4) throw new IllegalStateException(\"poison\"); return j; }).workers(1).queueSize(1).settler(s.settler()).name(\"poison\").build();",
        "var r = runToEnd(p, () -> s.take(false)); System.out.println(r.end() + \"; \" + s.states());");

/exit
