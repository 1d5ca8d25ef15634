package dev.drain.examples.jobtable;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.jobtable.PayloadCodec;
import dev.drain.jobtable.QueueOperations;
import dev.drain.lab.LocalPostgres;
import dev.drain.pool.ItemFailure;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The job table as a job queue, on PostgreSQL, in the order a service meets it:
 * <ol>
 *   <li>a deploy step brings the table to this version ({@code migrate()}, JT-1): the one call
 *       that takes a schema change's locks; a worker's {@code open()} takes none;</li>
 *   <li>a mailer serves the queue ({@code claimsUntilStopped()}, JT-13): it waits for work, and
 *       a job enqueued later is claimed at once (PostgreSQL's {@code LISTEN/NOTIFY});</li>
 *   <li>each order is written with its e-mail job in one transaction ({@code enqueue(connection,
 *       …)}, JT-11): an order rolled back sends nothing;</li>
 *   <li>a reminder is enqueued to run two seconds later (JT-12);</li>
 *   <li>each job carries an {@link Email}, written and read by a {@link PayloadCodec} (JT-15): any
 *       library's JSON would do, here it is by hand;</li>
 *   <li>once nothing is left to do ({@code backlog()}, JT-14), the mailer is stopped; a job that
 *       failed for good is read with its failure ({@code job(id)}), and requeued by its failure's
 *       text ({@code requeueDead(text)}).</li>
 * </ol>
 *
 * <p>Arguments: the JDBC URL of a PostgreSQL database (with its user and password in it), or
 * nothing for an embedded one.
 */
public final class Main {
    private Main() {}

    /** What an e-mail job carries. */
    record Email(String to, String subject) {}

    /** An e-mail as "to", a newline and the subject; the text of a job that is not one cannot be read (JT-15). */
    static final PayloadCodec<Email> EMAILS = PayloadCodec.of(e -> e.to() + "\n" + e.subject(), text -> {
        String[] parts = text.split("\n", 2);
        if (parts.length < 2) {
            throw new IllegalArgumentException("not an e-mail: no subject line");
        }
        return new Email(parts[0], parts[1]);
    });

    public static void main(String[] args) throws Exception {
        String url = args.length > 0 && !args[0].isBlank() ? args[0] : null;
        try (LocalPostgres local = url == null ? startLocal() : null) {
            run(local != null ? local.dataSource() : dataSource(url), System.out);
        }
    }

    /** Runs the example on {@code db}, printing what it does to {@code out}. */
    static void run(DataSource db, PrintStream out) throws Exception {
        JobTable.on(db).table("emails").migrate(); // 1. a deploy step, once
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS orders");
            s.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL)");
            s.execute("TRUNCATE emails");
        }
        try (JobTable emails = JobTable.on(db).table("emails").open();
                ExecutorService mailerThread = Executors.newSingleThreadExecutor()) {
            // 2. The mailer: one job, one e-mail; a mailbox that does not exist fails for good.
            ConcurrentSkipListSet<String> sent = new ConcurrentSkipListSet<>();
            WorkerPool<Job, Void> mailer = WorkerPool.<Job>forEach(job -> {
                Email email = EMAILS.read(job);
                if (email.to().startsWith("nobody@")) {
                    throw new IllegalArgumentException("no such mailbox: " + email.to());
                }
                sent.add(email.subject() + " to " + email.to()); // here: the e-mail is sent
            }).workers(4).settler(emails.settler()).name("mailer").build();
            Future<RunOutcome<Job>> served = mailerThread.submit(() -> {
                try (Stream<Job> claims = emails.claimsUntilStopped()) {
                    return mailer.drain(claims);
                }
            });

            // 3. Orders, each with its e-mail in one transaction.
            placeOrder(db, emails, 1, "ada@example.com", true);
            placeOrder(db, emails, 2, "grace@example.com", false); // the customer cancels: rolled back
            placeOrder(db, emails, 3, "nobody@example.com", true);
            // 4. A reminder, not sent before it is due.
            Instant due = Instant.now().plusSeconds(2);
            emails.enqueue(EMAILS.encodeAll(List.of(new Email("ada@example.com", "reminder"))), due);
            out.println("enqueued: orders 1 and 3 with their e-mails (order 2 rolled back), a reminder due at " + due);

            // 5. Once nothing is left to do, stop the mailer.
            QueueOperations queue = emails.operations();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (queue.backlog().unfinished() > 0 && System.nanoTime() < until) {
                Thread.sleep(100); // a dashboard's refresh: look again soon
            }
            out.println("backlog: " + queue.backlog());
            mailer.requestStop();
            RunOutcome<Job> outcome = served.get(30, TimeUnit.SECONDS);
            out.println("sent: " + sent);
            for (ItemFailure<Job> failure : outcome.failures()) {
                out.println("dead: " + queue.job(failure.item().id()).orElseThrow());
            }
            out.println("requeued the jobs that died of a missing mailbox: " + queue.requeueDead("no such mailbox"));
            out.println("backlog: " + queue.backlog());
        }
    }

    /** Writes an order and enqueues its e-mail in one transaction, then commits it, or rolls it back. */
    private static void placeOrder(DataSource db, JobTable emails, long order, String customer, boolean commit) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO orders (id, customer) VALUES (?, ?)")) {
                insert.setLong(1, order);
                insert.setString(2, customer);
                insert.executeUpdate();
            }
            emails.enqueue(c, EMAILS.encodeAll(List.of(new Email(customer, "order " + order))));
            if (commit) {
                c.commit();
            } else {
                c.rollback();
            }
        }
    }

    private static LocalPostgres startLocal() throws IOException {
        System.out.println("no database given: starting an embedded PostgreSQL (LocalPostgres) ...");
        return LocalPostgres.startKeptUntilClosed();
    }

    private static DataSource dataSource(String url) {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setURL(url);
        return source;
    }
}
