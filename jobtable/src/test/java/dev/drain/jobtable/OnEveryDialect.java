package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Waits;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the job table's example tests share: each test gets a table of its own on its dialect's
 * database, every table it opens is closed after it, and then no thread of those tables is left.
 * A subclass is a {@code @ParameterizedClass} over {@link Dialect}.
 */
@ExtendWith(Engines.Extension.class)
abstract class OnEveryDialect {
    final Dialect dialect;
    private final List<JobTable> opened = new ArrayList<>();
    /** Set before each test. */
    DataSource db = new JdbcDataSource();
    /** Set before each test: a name no other test uses. */
    String table = "unset";

    OnEveryDialect(Dialect dialect) {
        this.dialect = dialect;
    }

    @BeforeEach
    final void freshTable(Engines engines, TestInfo test) {
        db = engines.dataSource(dialect);
        table = Engines.freshTable(test.getTestMethod().orElseThrow().getName().substring(0, 12));
    }

    @AfterEach
    final void closeTables() {
        opened.forEach(JobTable::close);
        assertThat(Thread.getAllStackTraces().keySet()).as("the tables' threads after close")
                .noneMatch(t -> t.getName().startsWith("drain-jobtable-") && t.getName().contains("-" + table));
    }

    /** Pulls every claim of one stream of {@code t}'s, then closes it; {@return what it pulled} */
    static List<Job> claimAll(JobTable t) {
        try (Stream<Job> claims = t.claims()) {
            return claims.toList();
        }
    }

    /** Claims until a stream hands out something, looking every 20 ms, and {@return what it handed out} */
    static List<Job> claimWhenThere(JobTable t, String what) {
        List<Job> claimed = new ArrayList<>();
        Waits.untilLookingEvery(Duration.ofMillis(20), what, () -> {
            claimed.addAll(claimAll(t));
            return !claimed.isEmpty();
        });
        return claimed;
    }

    /** {@return {@code builder}'s table, on this test's table name, closed after the test} */
    final JobTable open(JobTableBuilder builder) throws SQLException {
        return open(builder, table);
    }

    /** {@return {@code builder}'s table named {@code name} (this test's name and a suffix), closed after the test} */
    final JobTable open(JobTableBuilder builder, String name) throws SQLException {
        JobTable t = builder.table(name).open();
        opened.add(t);
        return t;
    }
}
