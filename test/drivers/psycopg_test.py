# psycopg 3 against a server with snowflake preloaded (test/t/100_drivers.pl
# runs it; connection from PGHOST, PGPORT, PGDATABASE). Prints one
# "ok - ..." or "not ok - ..." line a check; exits 1 if any failed.
import json
import sys

import psycopg
from psycopg.types import TypeInfo
from psycopg.types.numeric import Int8BinaryLoader, IntLoader

failed = 0


def check(condition, description):
    global failed
    print(("ok - " if condition else "not ok - ") + "psycopg: " + description, flush=True)
    failed += not condition


conn = psycopg.connect(autocommit=True)
conn.execute("CREATE EXTENSION IF NOT EXISTS snowflake")
conn.execute("DROP TABLE IF EXISTS py_orders")
conn.execute("""CREATE TABLE py_orders (
    id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
    ref bigint NOT NULL DEFAULT snowflake_nextval(),
    note text)""")

# Without an adapter, psycopg returns a type it does not know as text.
row = conn.execute("INSERT INTO py_orders (note) VALUES (%s) RETURNING id, ref", ["plain"]).fetchone()
check(isinstance(row[0], str) and row[0].isdigit(), "unadapted snowflake arrives as its decimal text")
check(isinstance(row[1], int), "bigint arrives as int")
plain_id = int(row[0])
check(plain_id > 2**53, "a fresh id is above 2^53 (%d)" % plain_id)

# The adapter (README): load the type like int8, in text and binary.
info = TypeInfo.fetch(conn, "snowflake")
info.register(conn)  # the name "snowflake" for COPY set_types and arrays
conn.adapters.register_loader(info.oid, IntLoader)
conn.adapters.register_loader(info.oid, Int8BinaryLoader)

ids = [r[0] for r in conn.execute(
    "INSERT INTO py_orders (note) SELECT 'row ' || g FROM generate_series(1, 100) g RETURNING id").fetchall()]
check(all(isinstance(i, int) for i in ids) and ids == sorted(ids) and len(set(ids)) == 100,
      "DEFAULT snowflake_nextval() RETURNING gives 100 increasing int ids")

for binary in (False, True):
    mode = "binary" if binary else "text"
    cur = conn.cursor(binary=binary)
    rows = cur.execute("SELECT id, id::bigint AS b, id::text AS t, ref, ref::text AS rt FROM py_orders ORDER BY id").fetchall()
    check(all(r[0] == r[1] == int(r[2]) for r in rows), "%s protocol: snowflake reads back exactly" % mode)
    check(all(r[3] == int(r[4]) for r in rows), "%s protocol: bigint reads back exactly" % mode)
    # parameters: a Python int compares with the snowflake column exactly
    found = cur.execute("SELECT id FROM py_orders WHERE id = %s", [ids[-1]]).fetchone()
    check(found is not None and found[0] == ids[-1], "%s protocol: lookup by an int parameter" % mode)
    extreme = cur.execute("SELECT %s::bigint::snowflake", [2**63 - 1]).fetchone()[0]
    check(extreme == 2**63 - 1, "%s protocol: 2^63-1 round-trips" % mode)

# Binary without the loader: the wire form is int8's, 8 bytes big-endian.
raw = psycopg.connect(autocommit=True)
value = raw.cursor(binary=True).execute("SELECT id FROM py_orders ORDER BY id DESC LIMIT 1").fetchone()[0]
check(int.from_bytes(value, "big", signed=True) == ids[-1], "binary wire form is int8's")
raw.close()

# to_json: a snowflake is a JSON string, a bigint a JSON number.
texts = conn.execute("SELECT to_json(id)::text, to_json(id::bigint)::text FROM py_orders WHERE id = %s",
                     [ids[-1]]).fetchone()
check(texts[0] == '"%d"' % ids[-1], "to_json(snowflake) is a JSON string")
check(texts[1] == str(ids[-1]), "to_json(bigint) is a JSON number")
check(int(json.loads(texts[0])) == ids[-1], "the JSON string parses back to the id")

# COPY out, text and binary
with conn.cursor().copy("COPY (SELECT id, ref FROM py_orders ORDER BY id) TO STDOUT") as copy:
    text_rows = [tuple(int(v) for v in row) for row in copy.rows()]
expected = conn.execute("SELECT id, ref FROM py_orders ORDER BY id").fetchall()
check(text_rows == expected, "COPY TO text: every id exact")
with conn.cursor().copy("COPY (SELECT id, ref FROM py_orders ORDER BY id) TO STDOUT (FORMAT BINARY)") as copy:
    copy.set_types(["snowflake", "int8"])
    binary_rows = list(copy.rows())
check(binary_rows == expected, "COPY TO binary: every id exact")

# COPY in, text and binary, including 0 and 2^63-1
conn.execute("CREATE TEMP TABLE py_copy (id snowflake, ref bigint)")
incoming = [(0, 0), (1, 1), (2**53 + 1, 2**53 + 1), (2**63 - 1, 2**63 - 1)] + expected
with conn.cursor().copy("COPY py_copy FROM STDIN") as copy:
    for row in incoming:
        copy.write_row(row)
with conn.cursor().copy("COPY py_copy FROM STDIN (FORMAT BINARY)") as copy:
    copy.set_types(["int8", "int8"])  # snowflake's binary input is int8's wire form
    for row in incoming:
        copy.write_row(row)
back = conn.execute("SELECT id, ref FROM py_copy").fetchall()
check(back == incoming + incoming, "COPY FROM text and binary: every id exact")
# negative sentinels (COALESCE(id, -1)) are snowflakes too: in and out, text and binary
sentinels = [(-1, -1), (-2**63, -2**63)]
conn.execute("TRUNCATE py_copy")
with conn.cursor().copy("COPY py_copy FROM STDIN (FORMAT BINARY)") as copy:
    copy.set_types(["int8", "int8"])
    for row in sentinels:
        copy.write_row(row)
with conn.cursor().copy("COPY py_copy FROM STDIN") as copy:
    for row in sentinels:
        copy.write_row(row)
with conn.cursor().copy("COPY (SELECT id, ref FROM py_copy ORDER BY id) TO STDOUT (FORMAT BINARY)") as copy:
    copy.set_types(["snowflake", "int8"])
    back = list(copy.rows())
check(back == sorted(sentinels + sentinels), "COPY FROM and TO, text and binary: negative sentinels exact")

# text forms through the driver
b32 = conn.execute("SELECT snowflake_to_base32(%s::bigint)", [ids[0]]).fetchone()[0]
check(len(b32) == 13 and conn.execute("SELECT snowflake_from_base32(%s)", [b32]).fetchone()[0] == ids[0],
      "base32 round trip through parameters")

conn.execute("DROP TABLE py_orders")
conn.close()
sys.exit(1 if failed else 0)
