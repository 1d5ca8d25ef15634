// 23: external I/O under a deadline. A timeout or an abort interrupts the attempt's thread, and an interrupt does not
// cancel a query on the database's server, nor stop an HTTP client that does not check it: the driver needs a deadline
// of its own. The attempt's deadline reaches the handler (ItemContext.remaining(), WP-3), which hands it on, a little
// early; shown on the embedded PostgreSQL (pg_sleep) and the JDK's own HTTP server. Clauses: WP-3, WP-4, WP-24.
import dev.drain.jobtable.*; // for the launcher: it then adds the lab (LocalPostgres) and the PostgreSQL driver
import dev.drain.lab.LocalPostgres;
import javax.sql.DataSource;
import java.sql.*;
import java.net.*;
import java.net.http.*;
import com.sun.net.httpserver.*;

System.out.println("== 23 external I/O under a deadline: an interrupt alone, or a deadline handed to the driver ==");

// Every attempt here has 500 ms (its itemTimeout). A handler that hands its deadline on gives the driver the time
// left less 200 ms: the driver's own cancellation then lands before the pool's interrupt, which it would race.
Duration ITEM_TIMEOUT = Duration.ofMillis(500);
Duration MARGIN = Duration.ofMillis(200);

// driverDeadline(): the attempt's time left (ItemContext.remaining(), WP-3) less the margin, at least 1 ms.
Duration driverDeadline() {
    Duration left = ItemContext.current().remaining().minus(MARGIN);
    return left.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : left;
}

// once(name, call): one item on a pool of one worker, no retry; prints what the handler's call threw (the driver's
// own exception) and how the item failed: a TimeoutException if the pool's deadline ended it (WP-3).
void once(String name, Callable<?> call) {
    AtomicReference<String> threw = new AtomicReference<>("nothing: it returned");
    AtomicLong tookNanos = new AtomicLong();
    var pool = WorkerPool.<Integer>forEach(n -> {
        long start = System.nanoTime();
        try {
            call.call();
        } catch (Exception e) {
            threw.set(e.getClass().getSimpleName() + (e instanceof SQLException sql ? ", SQLState " + sql.getSQLState()
                    + ": " + sql.getMessage().lines().findFirst().orElse("") : ""));
            throw e;
        } finally {
            tookNanos.set(System.nanoTime() - start);
        }
    }).workers(1).itemTimeout(ITEM_TIMEOUT).name(name).build();
    RunOutcome<Integer> outcome = pool.drain(List.of(1));
    System.out.println("  the handler's call threw " + threw.get());
    System.out.println("  it ended before the pool's deadline: " + (tookNanos.get() < ITEM_TIMEOUT.toNanos())
            + "; the item failed with " + outcome.failures().getFirst().cause().getClass().getSimpleName());
}

// --- PostgreSQL: a query of 3 seconds (SELECT pg_sleep(3)) ----------------------------------------------------------

LocalPostgres postgres = LocalPostgres.start(); // a real server in a temporary folder, until postgres.close()
DataSource db = postgres.dataSource();
Connection watcher = db.getConnection(); // a second connection, to look at the server's side

// sleeping(): how many pg_sleep queries the server is running now, in pg_stat_activity (the watcher's own not counted)
int sleeping() throws SQLException {
    try (Statement s = watcher.createStatement(); ResultSet r = s.executeQuery("SELECT count(*) FROM pg_stat_activity"
            + " WHERE state = 'active' AND query LIKE 'SELECT pg_sleep%' AND pid <> pg_backend_pid()")) {
        r.next();
        return r.getInt(1);
    }
}

{
    // An interrupt alone: the handler runs the query as it would without a pool. Predict: does the timeout's interrupt
    // end the call at 500 ms, or does it wait the 3 s? Is the query still running on the server afterwards?
    System.out.println("PostgreSQL, an interrupt alone (the statement has no timeout):");
    long began = System.nanoTime();
    Connection c = db.getConnection();
    once("demo23-pg-interrupt", () -> {
        try (Statement s = c.createStatement()) {
            return s.execute("SELECT pg_sleep(3)");
        }
    });
    // The attempt's thread is virtual: an interrupt while it reads a socket closes the socket (java.net.Socket's
    // javadoc), so the driver's read fails at once: the call ends, and the connection with it. The server learns of
    // it only when it next writes to the connection (PostgreSQL's client_connection_check_interval is off by default).
    System.out.println("  the connection is closed: " + c.isClosed());
    System.out.println("  pg_sleep queries the server is still running: " + sleeping());
    until("the server's pg_sleep ends", () -> {
        try {
            return sleeping() == 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    });
    System.out.println("  the server ran it to its end, 3 s after it began: "
            + (System.nanoTime() - began >= Duration.ofSeconds(3).toNanos()));
    c.close();
}

// query(c, sql): runs sql with the attempt's deadline handed to the server: SET LOCAL statement_timeout (in ms, for
// this transaction only). On a failure it rolls back (the connection is fine) and throws it.
void query(Connection c, String sql) throws SQLException {
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
        s.execute("SET LOCAL statement_timeout = " + driverDeadline().toMillis());
        s.execute(sql);
        c.commit();
    } catch (SQLException e) {
        if (!c.isClosed()) {
            c.rollback();
        }
        throw e;
    } finally {
        if (!c.isClosed()) {
            c.setAutoCommit(true);
        }
    }
}

{
    // The deadline handed to the driver, from the attempt's time left. Predict: who ends the query, and can the same
    // connection run the next statement?
    System.out.println("PostgreSQL, the deadline handed to the driver (SET LOCAL statement_timeout):");
    Connection c = db.getConnection();
    once("demo23-pg-deadline", () -> {
        query(c, "SELECT pg_sleep(3)");
        return null;
    });
    System.out.println("  pg_sleep queries the server is still running: " + sleeping());
    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT 1")) {
        r.next();
        System.out.println("  the same connection is open: " + !c.isClosed() + ", and SELECT 1 returns " + r.getInt(1));
    }
    c.close();
}

{
    // A deploy's stop: requestStop(within) becomes an abort once within has passed (WP-24), and an abort interrupts, as
    // the timeout did. A service, itemTimeout 1 s, whose item 0's query hangs (pg_sleep(3)) and the others' do not;
    // the stop comes while item 0 is in flight. Predict, within 100 ms and then within 3 s: how does the run end, is
    // its connection kept, and when does the server end item 0's query?
    System.out.println("PostgreSQL, a deploy's requestStop(within), the deadline handed to the driver:");
    for (Duration within : List.of(Duration.ofMillis(100), Duration.ofSeconds(3))) {
        Connection c = db.getConnection();
        CountDownLatch inFlight = new CountDownLatch(1);
        var service = WorkerPool.<Integer>forEach(n -> {
                    inFlight.countDown();
                    query(c, n == 0 ? "SELECT pg_sleep(3)" : "SELECT pg_sleep(0)");
                }).workers(1).queueSize(1).itemTimeout(Duration.ofSeconds(1)).name("demo23-deploy").build();
        Thread deploy = Thread.ofVirtual().start(() -> {
            try {
                await("item 0 in flight", inFlight);
            } catch (InterruptedException e) {
                return;
            }
            service.requestStop(within);
        });
        long began = System.nanoTime();
        RunOutcome<Integer> outcome = service.drain(Stream.iterate(0, i -> i + 1));
        deploy.join(BOUND);
        String how = switch (outcome) {
            case RunOutcome.Aborted<Integer> aborted -> "Aborted, deadline passed: " + aborted.deadlinePassed();
            case RunOutcome.Completed<Integer> completed -> "Completed, stop requested: " + completed.stopRequested()
                    + ", failed " + completed.failures().stream().map(ItemFailure::item).toList();
            default -> outcome.toString();
        };
        System.out.println("  requestStop(" + within + "): " + how + "; the connection is closed: " + c.isClosed());
        until("the server's pg_sleep ends", () -> {
            try {
                return sleeping() == 0;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        System.out.println("    the server ended item 0's query before pg_sleep's 3 s (its statement_timeout): "
                + (System.nanoTime() - began < Duration.ofSeconds(3).toNanos()));
        c.close();
    }
}

// --- HTTP: the JDK's own server, and its client ----------------------------------------------------------------------

// A slow backend: each request waits until answer() is called (at most BOUND), then writes a 1 MB answer. Whether that
// write gets through says whether the client still holds the request open: a server learns that its client left only
// when it writes to it.
byte[] ANSWER = new byte[1 << 20];
CountDownLatch release = new CountDownLatch(1);
BlockingQueue<String> served = new LinkedBlockingQueue<>();
ExecutorService serverThreads = Executors.newVirtualThreadPerTaskExecutor();
HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
server.setExecutor(serverThreads);
server.createContext("/slow", exchange -> {
    CountDownLatch mine = release;
    try (exchange) {
        mine.await(BOUND.toNanos(), TimeUnit.NANOSECONDS);
        exchange.sendResponseHeaders(200, ANSWER.length);
        exchange.getResponseBody().write(ANSWER);
        served.add("it wrote its answer: the request was still open");
    } catch (IOException e) {
        served.add("its write failed: the client had closed the connection");
    } catch (InterruptedException e) {
        served.add("interrupted");
    }
});
server.createContext("/quick", exchange -> {
    try (exchange) {
        exchange.sendResponseHeaders(204, -1);
    }
});
server.start();
URI slow = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/slow");
HttpClient client = HttpClient.newHttpClient();
// A first request, answered at once: the client's classes are loaded and its connection is open before the
// lesson's requests, so that the pool's deadline finds each of them waiting for its answer.
System.out.println("a first request, answered at once: " + client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/quick")).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode());

// answer(): lets the backend answer the request it holds, and prints how its write went (waits at most BOUND).
void answer() throws InterruptedException {
    release.countDown();
    String how = served.poll(BOUND.toNanos(), TimeUnit.NANOSECONDS);
    System.out.println("  the server, answering once the run had ended: " + (how == null ? "no answer yet" : how));
    release = new CountDownLatch(1);
}

// get(future): the response, waiting for it in get(), whose interrupt does not reach the request; a failure of the
// request is thrown as itself (an HttpTimeoutException), not wrapped.
HttpResponse<byte[]> get(CompletableFuture<HttpResponse<byte[]>> future) throws Exception {
    try {
        return future.get();
    } catch (ExecutionException e) {
        throw e.getCause() instanceof Exception cause ? cause : e;
    }
}

{
    // An interrupt alone, client.send() with no timeout. Predict: does the request go on after the interrupt?
    System.out.println("HTTP, an interrupt alone, client.send():");
    once("demo23-http-send", () -> client.send(HttpRequest.newBuilder(slow).build(),
            HttpResponse.BodyHandlers.ofByteArray()));
    answer();
}

{
    // The same request, waited for with sendAsync(...).get(): the interrupt ends the wait, not the request.
    System.out.println("HTTP, an interrupt alone, client.sendAsync(...).get():");
    once("demo23-http-async", () -> get(client.sendAsync(HttpRequest.newBuilder(slow).build(),
            HttpResponse.BodyHandlers.ofByteArray())));
    answer();
}

{
    // The same sendAsync(...).get(), with the deadline handed to the request: HttpRequest.Builder.timeout(...).
    System.out.println("HTTP, the deadline handed to the request, timeout(...), with the same sendAsync(...).get():");
    once("demo23-http-deadline", () -> get(client.sendAsync(
            HttpRequest.newBuilder(slow).timeout(driverDeadline()).build(), HttpResponse.BodyHandlers.ofByteArray())));
    answer();
}

// Everything this script opened, closed: the client, the server and its threads, the connection, the database.
client.shutdownNow();
System.out.println("the HTTP client has terminated: " + client.awaitTermination(BOUND));
server.stop(0);
serverThreads.close();
watcher.close();
postgres.close();

tryIt("23", "JDBC's own statement timeout, Statement.setQueryTimeout(seconds), counts whole seconds; pgjdbc sends the"
                + " server a cancel request when it passes. With setQueryTimeout(1): under an itemTimeout of 500 ms,"
                + " and then of 2 s, who ends the query, and is the connection kept?",
        "LocalPostgres pg = LocalPostgres.start();",
        "for (Duration t : List.of(Duration.ofMillis(500), Duration.ofSeconds(2))) { Connection c = pg.dataSource().getConnection(); var o = WorkerPool.<Integer>forEach(n -> { try (Statement s = c.createStatement()) { s.setQueryTimeout(1); s.execute(\"SELECT pg_sleep(3)\"); } }).workers(1).itemTimeout(t).name(\"try23\").build().drain(List.of(1)); System.out.println(\"itemTimeout \" + t + \": \" + o.failures().getFirst().cause() + \"; the connection is closed: \" + c.isClosed()); c.close(); }",
        "pg.close();");

/exit
