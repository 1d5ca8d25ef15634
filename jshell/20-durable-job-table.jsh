// 20: script 19 on a real database: a job table on the embedded PostgreSQL (LocalPostgres, from Maven jars, started
// here in a few seconds). Marking a row done when it is taken loses what an abort drops; JobTable.claims() with its
// settler() writes what the run's books recorded, and the next run, another owner, gets the rest again.
// Clauses: JT-8, JT-6, JT-5, WP-22. (A kill -9 and the lease that recovers from it: ./contract-report --durable.)
import dev.drain.jobtable.*;
import dev.drain.lab.LocalPostgres;
import javax.sql.DataSource;
import java.sql.*;

System.out.println("== 20 a job table: acknowledge what the books settled, not what was taken ==");

LocalPostgres postgres = LocalPostgres.start(); // a real server in a temporary folder, until postgres.close()
DataSource db = postgres.dataSource();

// Ten jobs, 2 workers, an intake of 3, as in script 19: jobs 1 and 2 finish at once; the others wait until
// interrupted. Once both workers hold 3 and 4, the intake 5, 6, 7 and the producer 8, abort().
Set<Long> finished = new ConcurrentSkipListSet<>(); // what the handlers did finish, in either run
Handler<Job, Long> slowAfterTwo = job -> {
    if (job.id() > 2) {
        awaitInterrupt(); // only the abort's interrupt ends it
    }
    finished.add(job.id());
    return job.id();
};

List<String> tenJobs = IntStream.rangeClosed(1, 10).mapToObj(i -> "job-" + i).toList();

SortedSet<Long> rows(String table, String state) throws SQLException {
    SortedSet<Long> ids = new TreeSet<>();
    try (Connection c = db.getConnection(); Statement s = c.createStatement();
            ResultSet r = s.executeQuery("SELECT id FROM " + table + " WHERE state = '" + state + "'")) {
        while (r.next()) {
            ids.add(r.getLong(1));
        }
    }
    return ids;
}

String states(String table) throws SQLException {
    return "done " + rows(table, "done") + ", ready " + rows(table, "ready") + ", running " + rows(table, "running")
            + ", dead " + rows(table, "dead");
}

SortedSet<Long> ids(Collection<Job> jobs) {
    SortedSet<Long> ids = new TreeSet<>();
    jobs.forEach(job -> ids.add(job.id()));
    return ids;
}

<T> RunOutcome<T> abortAfter(WorkerPool<T, Long> pool, Iterator<T> source) {
    Results<T, Long> results = pool.run(source);
    try (results) {
        until("8 pulled, 2 succeeded", () -> results.stats().pulled() == 8 && results.stats().succeeded() == 2);
        pool.abort();
        while (results.hasNext()) {
            results.next();
        }
    } catch (PoolAborted e) {
        // the iteration's end: what the abort left undone is in the outcome too
    }
    return results.outcome().orElseThrow();
}

// Wrong: a hand-made queue that takes a row and marks it done in one statement (UPDATE ... RETURNING, or
// DELETE ... RETURNING): simple, fast, and every job the run then drops is gone.
Iterator<Job> doneOnTake(String table) {
    return new Iterator<>() {
        private Job taken; // taken by hasNext() and not yet handed out by next(); null if none

        public boolean hasNext() {
            if (taken == null) {
                try (Connection c = db.getConnection(); Statement s = c.createStatement();
                        ResultSet r = s.executeQuery("UPDATE " + table + " SET state = 'done' WHERE id = (SELECT id FROM "
                                + table + " WHERE state = 'ready' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)"
                                + " RETURNING id, payload")) {
                    taken = r.next() ? new Job(r.getLong(1), r.getString(2), 1) : null;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
            return taken != null;
        }

        public Job next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Job next = taken;
            taken = null;
            return next;
        }
    };
}

{
    JobTable wrong = JobTable.on(db).table("lesson_wrong").open(); // the same table, filled the same way
    wrong.enqueue(tenJobs);
    wrong.close();
    var pool = WorkerPool.<Job, Long>builder(slowAfterTwo).workers(2).queueSize(3).itemTimeout(BOUND)
            .name("demo20-wrong").build();
    RunOutcome<Job> outcome = abortAfter(pool, doneOnTake("lesson_wrong"));
    System.out.println("Wrong: done on take, then abort()");
    System.out.println("  the run: discarded " + ids(outcome.discarded()) + ", cancelled " + ids(outcome.cancelled()));
    System.out.println("  the table: " + states("lesson_wrong"));
    SortedSet<Long> lost = rows("lesson_wrong", "done");
    lost.removeAll(finished);
    System.out.println("  done in the table and never finished (lost): " + lost + "; no run will claim them again");
    finished.clear();
}

{
    JobTable table = JobTable.on(db).table("lesson_right").ownerPrefix("first").open();
    table.enqueue(tenJobs);
    var pool = WorkerPool.<Job, Long>builder(slowAfterTwo).workers(2).queueSize(3).itemTimeout(BOUND)
            .settler(table.settler()).name("demo20-right").build();
    RunOutcome<Job> outcome;
    try (Stream<Job> claims = table.claims()) { // closing it releases what was claimed and never pulled (JT-6)
        outcome = abortAfter(pool, claims.iterator());
    }
    table.close();
    System.out.println("Right: claims() and settler(), then abort()");
    System.out.println("  the run: " + outcome.getClass().getSimpleName() + ", discarded " + ids(outcome.discarded())
            + ", cancelled " + ids(outcome.cancelled()));
    System.out.println("  the table once the run ended: " + states("lesson_right"));

    // The next run, another owner, claims what is ready again: the released jobs and the ones never pulled.
    JobTable next = JobTable.on(db).table("lesson_right").ownerPrefix("next").open();
    var again = WorkerPool.<Job, Long>builder(job -> job.id()).workers(2).queueSize(3).settler(next.settler())
            .name("demo20-again").build();
    SortedSet<Long> handled = new TreeSet<>();
    try (Stream<Job> claims = next.claims(); Results<Job, Long> results = again.run(claims)) {
        results.forEachRemaining(handled::add);
    }
    next.close();
    System.out.println("  the next run handled " + handled);
    System.out.println("  the table: " + states("lesson_right"));
}

tryIt("20", "in a fresh table, let job 4 fail on every attempt: which state does its row end in, what does"
                + " its failure say (operations().job(4), JT-14), and which rows are still ready afterwards (its"
                + " failure stops the intake: WP-6)?",
        "JobTable t = JobTable.on(db).table(\"lesson_try\").open(); t.enqueue(tenJobs);",
        "var p = WorkerPool.<Job, Long>builder(j -> { if (j.id() == 4) throw new IllegalStateException(\"poison\"); return j.id(); }).workers(1).queueSize(1).settler(t.settler()).name(\"poison\").build();",
        "try (Stream<Job> c = t.claims(); Results<Job, Long> r = p.run(c)) { r.forEachRemaining(x -> {}); } catch (PoolFailure e) { System.out.println(e.getMessage()); }",
        "System.out.println(states(\"lesson_try\") + \" \" + t.operations().backlog());",
        "System.out.println(t.operations().job(4).orElseThrow()); t.close(); postgres.close();");

/exit
