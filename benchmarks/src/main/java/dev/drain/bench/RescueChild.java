package dev.drain.bench;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import java.util.Iterator;
import java.util.stream.Stream;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * {@link JobQueueBench}'s victim, in a JVM of its own: opens the job table with the default lease
 * (30 s), claims {@code n} rows and keeps them {@code running}, prints {@code held}, and waits to
 * be killed. Arguments: the JDBC URL (user and password in it), the table, {@code n}.
 */
public final class RescueChild {
    private RescueChild() {}

    public static void main(String[] args) throws Exception {
        PGSimpleDataSource db = new PGSimpleDataSource();
        db.setURL(args[0]);
        int n = Integer.parseInt(args[2]);
        JobTable table = JobTable.on(db).table(args[1]).open(); // never closed: the process is killed holding it
        Stream<Job> claims = table.claims();
        Iterator<Job> it = claims.iterator();
        for (int i = 0; i < n; i++) {
            it.next();
        }
        System.out.println("held");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE); // until the SIGKILL
    }
}
