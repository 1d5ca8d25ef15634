package dev.drain.jobtable;

import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.util.List;
import java.util.stream.Stream;
import org.h2.jdbcx.JdbcDataSource;

/**
 * The README's sample of a pool over a job table, as a region: the build compiles this file, and
 * {@code DurableSnippetsTest} runs the region, checks what it prints, and checks that README.md shows it
 * exactly as it is here.
 */
final class DurableSnippets {
    private DurableSnippets() {}

    static void durable() throws Exception {
        // @start region="durable"
        JdbcDataSource db = new JdbcDataSource();        // H2 in memory here; a PostgreSQL DataSource in production
        db.setURL("jdbc:h2:mem:readme;DB_CLOSE_DELAY=-1");
        try (JobTable table = JobTable.on(db).table("emails").open()) {
            table.enqueue(List.of("to ada", "to grace", "to barbara"));
            WorkerPool<Job, String> pool = WorkerPool.<Job, String>builder(job -> "sent " + job.payload())
                    .workers(2)
                    .settler(table.settler())            // the table records what the run's books settled
                    .build();
            try (Stream<Job> claims = table.claims();   // closing it releases what was claimed, never pulled
                    Results<Job, String> results = pool.run(claims)) {
                results.forEachRemaining(System.out::println);
            }
            System.out.println(table.counts());         // {READY=0, RUNNING=0, DONE=3, DEAD=0}
        }
        // @end
    }
}
