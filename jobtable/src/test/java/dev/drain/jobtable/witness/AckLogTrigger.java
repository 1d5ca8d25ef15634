package dev.drain.jobtable.witness;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.h2.api.Trigger;
import org.jspecify.annotations.Nullable;

/**
 * H2's form of the external witness of acknowledgements ({@link Witnesses}): after every update of
 * a job table's row into {@code done} or {@code dead} from another state, a row in
 * {@code <table>_acks}. On PostgreSQL the same is a PL/pgSQL trigger. H2 makes it by name, so it is
 * public; it is not API.
 */
public final class AckLogTrigger implements Trigger {
    /** The job table's column order (Store.schema): id, payload, state, owner, claims, … */
    private static final int ID = 0;
    private static final int STATE = 2;
    private static final int CLAIMS = 4;

    /** The log's table; set once, by {@link #init}, before H2 fires the trigger. */
    private String acks = "unset";

    /** Made by H2, by name. */
    public AckLogTrigger() {}

    @Override
    public void init(Connection conn, String schemaName, String triggerName, String tableName, boolean before, int type) {
        acks = tableName.toLowerCase(java.util.Locale.ROOT) + "_acks";
    }

    @Override
    public void fire(Connection conn, @Nullable Object @Nullable [] oldRow, @Nullable Object @Nullable [] newRow) throws SQLException {
        if (oldRow == null || newRow == null) {
            return;
        }
        Object state = newRow[STATE];
        if (state != null && (state.equals("done") || state.equals("dead")) && !state.equals(oldRow[STATE])) {
            try (PreparedStatement p = conn.prepareStatement("INSERT INTO " + acks + " (id, state, claim) VALUES (?, ?, ?)")) {
                p.setObject(1, newRow[ID]);
                p.setObject(2, state);
                p.setObject(3, newRow[CLAIMS]);
                p.executeUpdate();
            }
        }
    }
}
