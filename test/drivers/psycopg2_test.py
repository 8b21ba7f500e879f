# psycopg2 against a server with snowflake preloaded and the table orders
# (id bigint, sid snowflake, sids snowflake[]: test/t/100_drivers.pl makes it;
# connection from PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..." or
# "not ok - ..." line a check; exits 1 if any failed.
import sys

import psycopg2
import psycopg2.extensions

failed = 0


def check(condition, description):
    global failed
    print(("ok - " if condition else "not ok - ") + "psycopg2: " + description, flush=True)
    failed += not condition


def register_snowflake(conn):
    """docs/drivers.md: snowflake and snowflake[] as Python ints, on this connection."""
    with conn.cursor() as cur:
        cur.execute("SELECT 'snowflake'::regtype::oid, 'snowflake[]'::regtype::oid")
        oid, array_oid = cur.fetchone()
    snowflake = psycopg2.extensions.new_type((oid,), "SNOWFLAKE", psycopg2.extensions.LONGINTEGER)
    psycopg2.extensions.register_type(snowflake, conn)
    psycopg2.extensions.register_type(
        psycopg2.extensions.new_array_type((array_oid,), "SNOWFLAKE[]", snowflake), conn)
    return oid


ODD = [2**53 + 1, 2**63 - 1]  # no double holds these

conn = psycopg2.connect("")
conn.autocommit = True
cur = conn.cursor()

# before: unknown OIDs arrive as their text
cur.execute("INSERT INTO orders (sids) VALUES (%s) RETURNING id, sid, sids", [ODD])
id_, sid, sids = cur.fetchone()
check(isinstance(id_, int) and isinstance(sid, str) and sids == "{%d,%d}" % tuple(ODD),
      "before registration: bigint is int, snowflake str %r, snowflake[] the str %r" % (sid, sids))

register_snowflake(conn)
cur.execute("INSERT INTO orders (sids) VALUES (%s) RETURNING id, sid, sids, id::text, sid::text", [ODD])
id_, sid, sids, id_text, sid_text = cur.fetchone()
check(type(id_) is int and type(sid) is int and str(id_) == id_text and str(sid) == sid_text,
      "after: bigint and snowflake defaults are ints (%d, %d)" % (id_, sid))
check(id_ > 2**53 and sid > 2**53, "the ids are above 2^53")
check(sids == ODD, "after: snowflake[] is a list of ints, 2^53+1 and 2^63-1 exact")

# ids above 2^53 as parameters, both columns, and back
cur.execute("INSERT INTO orders (id, sid) VALUES (%s, %s) RETURNING id, sid", ODD)
check(cur.fetchone() == tuple(ODD), "2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact")
cur.execute("SELECT id, sid FROM orders WHERE sid = ANY(%s)", [ODD])
check(sorted(cur.fetchall()) == [tuple(ODD)], "a list parameter against a snowflake column")

# lookups by a parameter use the indexes
for column, index in (("id", "orders_pkey"), ("sid", "orders_sid_key")):
    cur.execute("EXPLAIN SELECT note FROM orders WHERE %s = %%s" % column, [sid])
    plan = "\n".join(r[0] for r in cur.fetchall())
    check("Index Scan using %s" % index in plan, "lookup by %s as a parameter uses %s" % (column, index))
cur.execute("SELECT id, sid FROM orders WHERE sid = %s", [sid])
check(cur.fetchone() == (id_, sid), "lookup by sid returns the row")
# a numeric parameter (a float here) does not use the index, or does not compare
cur.execute("EXPLAIN SELECT note FROM orders WHERE id = %s", [5.0])
plan = "\n".join(r[0] for r in cur.fetchall())
check("Seq Scan on orders" in plan, "a numeric parameter against bigint is a sequential scan")
try:
    cur.execute("SELECT note FROM orders WHERE sid = %s", [5.0])
    error = ""
except psycopg2.errors.UndefinedFunction as e:
    error = str(e).splitlines()[0]
check(error == "operator does not exist: snowflake = numeric", "a numeric parameter against snowflake: " + error)

# a fresh connection needs the registration again (it is per connection)
other = psycopg2.connect("")
with other.cursor() as c2:
    c2.execute("SELECT sid FROM orders WHERE sid = %s", [sid])
    check(isinstance(c2.fetchone()[0], str), "an unregistered connection still gets str")
other.close()

conn.close()
sys.exit(1 if failed else 0)
