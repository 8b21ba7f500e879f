# SQLAlchemy 1.4 on psycopg2 against a server with snowflake preloaded and the
# table orders (id bigint, sid snowflake, sids snowflake[]: test/t/100_drivers.pl
# makes it; connection from PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..."
# or "not ok - ..." line a check; exits 1 if any failed.
import sys
import warnings

import psycopg2.extensions
import sqlalchemy
from sqlalchemy import BigInteger, Column, Table, Text, event, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session, declarative_base
from sqlalchemy.schema import CreateTable

failed = 0


def check(condition, description):
    global failed
    print(("ok - " if condition else "not ok - ") + "sqlalchemy: " + description, flush=True)
    failed += not condition


ODD = [2**53 + 1, 2**63 - 1]  # no double holds these
engine = sqlalchemy.create_engine("postgresql+psycopg2://", future=True)

# before: reflection does not know the type; values are str
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    reflected = Table("orders", sqlalchemy.MetaData(), autoload_with=engine)
check(isinstance(reflected.c.sid.type, sqlalchemy.types.NullType)
      and any("Did not recognize type 'snowflake'" in str(w.message) for w in caught),
      "before: snowflake reflected as NullType, with a warning (%s)" % [str(w.message) for w in caught])
with engine.connect() as conn:
    row = conn.execute(text("SELECT sid, sids FROM orders WHERE sids IS NULL LIMIT 1")).one()
    check(isinstance(row.sid, str), "before: snowflake values are str")


# docs/drivers.md: the column type, its name for reflection, and psycopg2's
# typecasters on every connection of the engine
class Snowflake(sqlalchemy.types.TypeDecorator):
    """A snowflake column: a Python int, "snowflake" in DDL."""
    impl = BigInteger
    cache_ok = True

    def process_result_value(self, value, dialect):
        return None if value is None else int(value)


@compiles(Snowflake, "postgresql")
def compile_snowflake(type_, compiler, **kw):
    return "snowflake"


postgresql.base.ischema_names["snowflake"] = Snowflake


@event.listens_for(engine, "connect")
def register_snowflake(dbapi_connection, connection_record):
    with dbapi_connection.cursor() as cur:
        cur.execute("SELECT 'snowflake'::regtype::oid, 'snowflake[]'::regtype::oid")
        oid, array_oid = cur.fetchone()
    snowflake = psycopg2.extensions.new_type((oid,), "SNOWFLAKE", psycopg2.extensions.LONGINTEGER)
    psycopg2.extensions.register_type(snowflake, dbapi_connection)
    psycopg2.extensions.register_type(
        psycopg2.extensions.new_array_type((array_oid,), "SNOWFLAKE[]", snowflake), dbapi_connection)


engine.dispose()  # connections made from now on are registered

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    reflected = Table("orders", sqlalchemy.MetaData(), autoload_with=engine)
check(isinstance(reflected.c.sid.type, Snowflake) and isinstance(reflected.c.sids.type, ARRAY)
      and isinstance(reflected.c.sids.type.item_type, Snowflake) and isinstance(reflected.c.id.type, BigInteger)
      and not caught, "after: reflection gives Snowflake, ARRAY(Snowflake) and BIGINT, no warning")

Base = declarative_base()


class Order(Base):
    __tablename__ = "orders"
    __mapper_args__ = {"eager_defaults": True}  # the defaults come back by RETURNING
    id = Column(BigInteger, primary_key=True, server_default=text("snowflake_nextval()"))
    sid = Column(Snowflake, unique=True, nullable=False, server_default=text("snowflake_nextval()"))
    sids = Column(ARRAY(Snowflake))
    note = Column(Text)


ddl = str(CreateTable(Order.__table__).compile(dialect=postgresql.dialect()))
check("sid snowflake DEFAULT snowflake_nextval() NOT NULL" in ddl and "sids snowflake[]" in ddl,
      "DDL of the model names the type")

with Session(engine) as session:
    order = Order(sids=ODD, note="orm")
    session.add(order)
    session.commit()
    id_, sid = order.id, order.sid
    texts = session.execute(text("SELECT id::text, sid::text FROM orders WHERE id = :id"), {"id": id_}).one()
    check(type(id_) is int and type(sid) is int and (str(id_), str(sid)) == tuple(texts),
          "ORM insert: both database defaults come back as ints, exact (%d, %d)" % (id_, sid))
    check(id_ > 2**53 and sid > 2**53, "the ids are above 2^53")
    session.expire_all()
    found = session.query(Order).filter(Order.sid == sid).one()
    check(found.id == id_ and found.sids == ODD, "lookup by sid; snowflake[] is a list of ints, 2^53+1 and 2^63-1 exact")
    session.add(Order(id=ODD[0], sid=ODD[1], note="odd"))
    session.commit()
    session.expire_all()
    odd = session.get(Order, ODD[0])
    check(odd.sid == ODD[1], "2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact")

with engine.connect() as conn:
    for column, index in (("id", "orders_pkey"), ("sid", "orders_sid_key")):
        plan = "\n".join(conn.execute(text("EXPLAIN SELECT note FROM orders WHERE %s = :v" % column), {"v": sid}).scalars())
        check("Index Scan using %s" % index in plan, "lookup by %s as a parameter uses %s" % (column, index))
    query = sqlalchemy.select(Order.note).where(Order.sid == sid).compile(engine)
    plan = "\n".join(conn.exec_driver_sql("EXPLAIN " + str(query), query.params).scalars())
    check("Index Scan using orders_sid_key" in plan, "an ORM select by sid uses orders_sid_key")

sys.exit(1 if failed else 0)
