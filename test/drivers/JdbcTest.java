// Plain JDBC (Debian libpostgresql-jdbc-java) against a server with snowflake
// preloaded and the table orders (id bigint, sid snowflake, sids snowflake[]:
// made by test/t/100_drivers.pl, which runs this with the source launcher;
// connection from PGHOST (127.0.0.1), PGPORT, PGDATABASE). Prints one "ok - ..."
// or "not ok - ..." line a check; exits 1 if any failed.
import java.sql.*;
import java.util.Arrays;
import org.postgresql.PGConnection;
import org.postgresql.core.Field;
import org.postgresql.jdbc.PgResultSet;
import org.postgresql.util.PGobject;

public class JdbcTest {
    static int failed = 0;

    static void check(boolean condition, String description) {
        System.out.println((condition ? "ok" : "not ok") + " - jdbc: " + description);
        if (!condition) failed++;
    }

    // docs/drivers.md: what getObject gives for a snowflake once registered
    // with addDataType (pgjdbc maps extension types to PGobjects only)
    public static class Snowflake extends PGobject {
        public Snowflake() { setType("snowflake"); }
        public long longValue() { return Long.parseLong(getValue()); }
    }

    // the wire format of a column of a result (pgjdbc has no public accessor)
    static int format(ResultSet rs, int column) throws SQLException {
        try {
            java.lang.reflect.Field fields = PgResultSet.class.getDeclaredField("fields");
            fields.setAccessible(true);
            return ((Field[]) fields.get(rs.unwrap(PgResultSet.class)))[column - 1].getFormat();
        } catch (ReflectiveOperationException e) {
            throw new SQLException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT") + "/"
            + System.getenv("PGDATABASE") + "?user=" + System.getProperty("user.name");
        long[] odd = {(1L << 53) + 1, Long.MAX_VALUE}; // no double holds these
        // text (the default) and binary (prepareThreshold=-1: binary from the
        // first execution, for the types pgjdbc reads in binary, int8 among them)
        for (String mode : new String[]{"text", "binary"}) {
            try (Connection conn = DriverManager.getConnection(url + (mode.equals("binary") ? "&prepareThreshold=-1" : ""))) {
                run(conn, mode, odd);
            }
        }
        System.exit(failed > 0 ? 1 : 0);
    }

    static void run(Connection conn, String mode, long[] odd) throws SQLException {
        long id, sid;
        try (PreparedStatement insert = conn.prepareStatement(
                 "INSERT INTO orders (sids) VALUES (?) RETURNING id, sid, sids, id::text, sid::text, sids::bigint[]")) {
            insert.setArray(1, conn.createArrayOf("bigint", new Long[]{odd[0], odd[1]}));
            ResultSet rs = insert.executeQuery();
            rs.next();
            ResultSetMetaData meta = rs.getMetaData();
            Object object = rs.getObject("sid");
            check(meta.getColumnType(1) == Types.BIGINT && rs.getObject("id") instanceof Long
                  && meta.getColumnType(2) == Types.OTHER && object.getClass().getName().equals("org.postgresql.util.PGobject"),
                  mode + ": bigint is Long; snowflake is Types.OTHER and getObject a PGobject (" + object + ")");
            String longError = "";
            try {
                rs.getObject("sid", Long.class);
            } catch (SQLException e) {
                longError = e.getMessage();
            }
            check(longError.contains("not supported"), mode + ": getObject(sid, Long.class) refuses: " + longError);
            check(format(rs, 1) == (mode.equals("binary") ? Field.BINARY_FORMAT : Field.TEXT_FORMAT) && format(rs, 2) == Field.TEXT_FORMAT,
                  mode + ": bigint arrives in " + mode + ", snowflake in text (pgjdbc reads unknown types as text)");
            id = rs.getLong("id");
            sid = rs.getLong("sid");
            check(Long.toString(id).equals(rs.getString(4)) && Long.toString(sid).equals(rs.getString(5)),
                  mode + ": getLong of bigint and snowflake is exact (" + id + ", " + sid + ")");
            check(id > (1L << 53) && sid > (1L << 53), mode + ": the ids are above 2^53");
            Object[] raw = (Object[]) rs.getArray("sids").getArray();
            check(raw.length == 2 && raw[0].getClass().getName().equals("org.postgresql.util.PGobject"),
                  mode + ": snowflake[] getArray() gives PGobjects (" + raw[1] + ")");
            Object cast = rs.getArray(6).getArray();
            check(cast instanceof Long[] && Arrays.equals((Long[]) cast, new Long[]{odd[0], odd[1]}),
                  mode + ": sids::bigint[] getArray() gives Long[], 2^53+1 and 2^63-1 exact");
        }
        try (PreparedStatement insert = conn.prepareStatement("INSERT INTO orders (id, sid) VALUES (?, ?) RETURNING id, sid")) {
            insert.setLong(1, odd[0] + (mode.equals("binary") ? 2 : 0));
            insert.setLong(2, odd[1] - (mode.equals("binary") ? 2 : 0));
            ResultSet rs = insert.executeQuery();
            rs.next();
            check(rs.getLong(1) == odd[0] + (mode.equals("binary") ? 2 : 0) && rs.getLong(2) == odd[1] - (mode.equals("binary") ? 2 : 0),
                  mode + ": ids near 2^53 and 2^63 as setLong parameters into bigint and snowflake, exact");
        }
        for (String[] c : new String[][]{{"id", "orders_pkey"}, {"sid", "orders_sid_key"}}) {
            try (PreparedStatement explain = conn.prepareStatement("EXPLAIN SELECT note FROM orders WHERE " + c[0] + " = ?")) {
                explain.setLong(1, sid);
                ResultSet rs = explain.executeQuery();
                StringBuilder plan = new StringBuilder();
                while (rs.next()) plan.append(rs.getString(1)).append('\n');
                check(plan.toString().contains("Index Scan using " + c[1]), mode + ": lookup by " + c[0] + " as a setLong parameter uses " + c[1]);
            }
        }
        try (PreparedStatement lookup = conn.prepareStatement("SELECT id FROM orders WHERE sid = ?")) {
            lookup.setLong(1, sid);
            ResultSet rs = lookup.executeQuery();
            check(rs.next() && rs.getLong(1) == id, mode + ": lookup by sid returns the row");
        }
        conn.unwrap(PGConnection.class).addDataType("snowflake", Snowflake.class);
        try (PreparedStatement select = conn.prepareStatement("SELECT sid, ARRAY[sid] FROM orders WHERE id = ?")) {
            select.setLong(1, id);
            ResultSet rs = select.executeQuery();
            rs.next();
            Object object = rs.getObject(1);
            Object[] array = (Object[]) rs.getArray(2).getArray();
            check(object instanceof Snowflake && ((Snowflake) object).longValue() == sid
                  && array[0] instanceof Snowflake && ((Snowflake) array[0]).longValue() == sid,
                  mode + ": after addDataType, getObject and getArray elements are Snowflakes, exact (" + array[0].getClass().getSimpleName() + ")");
        }
    }
}
