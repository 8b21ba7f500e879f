# Django 3.2 on psycopg2 against a server with snowflake preloaded and the
# table orders (id bigint, sid snowflake, both DEFAULT snowflake_nextval(), and
# sids snowflake[]: test/t/100_drivers.pl makes it; connection from PGHOST,
# PGPORT, PGDATABASE). Prints one "ok - ..." or "not ok - ..." line a check;
# exits 1 if any failed.
import io
import json
import os
import sys

import django
from django.conf import settings

settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": os.environ["PGDATABASE"],
                           "HOST": os.environ["PGHOST"], "PORT": os.environ["PGPORT"]}},
    INSTALLED_APPS=[], USE_TZ=True)
django.setup()

import psycopg2.extensions
from django.contrib.postgres.fields import ArrayField
from django.core import serializers
from django.core.management import call_command
from django.db import IntegrityError, DataError, connection, models, transaction
from django.db.backends.signals import connection_created

failed = 0


def check(condition, description):
    global failed
    print(("ok - " if condition else "not ok - ") + "django: " + description, flush=True)
    failed += not condition


ODD = [2**53 + 1, 2**63 - 1]  # no double holds these


def inspect():
    out = io.StringIO()
    call_command("inspectdb", "orders", stdout=out)
    return out.getvalue()


# before: what inspectdb writes, and that model
models_py = inspect()
check("id = models.BigAutoField(primary_key=True)" in models_py,
      "inspectdb: the bigint key with DEFAULT snowflake_nextval() is a BigAutoField")
check("sid = models.TextField(unique=True)  # This field type is a guess." in models_py,
      "before: inspectdb models the snowflake column as a TextField, a guess")


class GuessedOrder(models.Model):
    id = models.BigAutoField(primary_key=True)
    sid = models.TextField(unique=True)
    note = models.TextField(blank=True, null=True)

    class Meta:
        app_label = "shop"
        db_table = "orders"
        managed = False


try:
    with transaction.atomic():
        GuessedOrder.objects.create(note="guessed")
    error = ""
except DataError as e:
    error = str(e).splitlines()[0]
check(error == 'invalid input syntax for type snowflake: ""', "before: save() sends the field's default, not the database's: " + error)


class PlainOrder(models.Model):
    id = models.BigAutoField(primary_key=True)
    sid = models.BigIntegerField(unique=True)

    class Meta:
        app_label = "shop"
        db_table = "orders"
        managed = False


plain = PlainOrder.objects.order_by("id").first()
check(isinstance(plain.sid, str), "before: a BigIntegerField on a snowflake column holds a str (%r)" % plain.sid)
text = serializers.serialize("json", [plain])
check(text == '[{"model": "shop.plainorder", "pk": %d, "fields": {"sid": "%s"}}]' % (plain.id, plain.sid),
      "before: Django's JSON serializer writes a bigint id as a JSON number: " + text)


# docs/drivers.md: the field, and the one registration on every connection
class DatabaseDefault(models.Expression):
    """DEFAULT in an INSERT: the column's default applies."""

    def as_sql(self, compiler, connection):
        return "DEFAULT", []


class SnowflakeField(models.BigIntegerField):
    """A snowflake column: an int, its default left to the database and returned on save."""
    db_returning = True  # INSERT ... RETURNING it

    def db_type(self, connection):
        return "snowflake"

    def pre_save(self, model_instance, add):
        value = super().pre_save(model_instance, add)
        return DatabaseDefault() if add and value is None else value


def register_snowflake(conn):
    """psycopg2's registration (psycopg2_test.py)."""
    with conn.cursor() as cur:
        cur.execute("SELECT 'snowflake'::regtype::oid, 'snowflake[]'::regtype::oid")
        oid, array_oid = cur.fetchone()
    snowflake = psycopg2.extensions.new_type((oid,), "SNOWFLAKE", psycopg2.extensions.LONGINTEGER)
    psycopg2.extensions.register_type(snowflake, conn)
    psycopg2.extensions.register_type(
        psycopg2.extensions.new_array_type((array_oid,), "SNOWFLAKE[]", snowflake), conn)
    return oid


def on_connection(sender, connection, **kwargs):
    oid = register_snowflake(connection.connection)
    connection.introspection.data_types_reverse = {  # inspectdb
        **type(connection.introspection).data_types_reverse, oid: "snowflake_fields.SnowflakeField"}


connection_created.connect(on_connection)
connection.close()  # the next connection is registered


class Order(models.Model):
    id = models.BigAutoField(primary_key=True)  # bigint DEFAULT snowflake_nextval()
    sid = SnowflakeField(unique=True)  # snowflake DEFAULT snowflake_nextval()
    sids = ArrayField(SnowflakeField(), null=True)
    note = models.TextField(null=True)

    class Meta:
        app_label = "shop"
        db_table = "orders"
        managed = False


# Django's JSON serializer with 64-bit ids as strings (a JSON number above
# 2^53 is rounded by JavaScript): SERIALIZATION_MODULES = {"json": "this module"}
class Serializer(serializers.json.Serializer):
    def _value_from_field(self, obj, field):
        value = field.value_from_object(obj)
        if isinstance(field, models.BigIntegerField) and value is not None:
            return str(value)
        if isinstance(field, ArrayField) and isinstance(field.base_field, models.BigIntegerField) and value is not None:
            return [None if v is None else str(v) for v in value]
        return super()._value_from_field(obj, field)


serializers.register_serializer("json", __name__)

models_py = inspect()
check("sid = snowflake_fields.SnowflakeField(unique=True)" in models_py,
      "after: inspectdb models the snowflake column as a SnowflakeField")

order = Order.objects.create(note="django", sids=ODD)
with connection.cursor() as cur:
    cur.execute("SELECT id::text, sid::text FROM orders WHERE id = %s", [order.id])
    texts = cur.fetchone()
check(type(order.id) is int and type(order.sid) is int and (str(order.id), str(order.sid)) == texts,
      "save(): both database defaults come back as ints, exact (%d, %d)" % (order.id, order.sid))
check(order.id > 2**53 and order.sid > 2**53, "the ids are above 2^53")
many = Order.objects.bulk_create([Order(note="bulk %d" % i) for i in range(3)])
check(all(type(o.id) is int and type(o.sid) is int for o in many) and len({o.sid for o in many}) == 3,
      "bulk_create: every row's defaults come back")
found = Order.objects.get(sid=order.sid)
check(found.id == order.id and found.sids == ODD, "lookup by sid; snowflake[] is a list of ints, 2^53+1 and 2^63-1 exact")
Order.objects.create(id=ODD[0], sid=ODD[1], note="odd")
check(Order.objects.get(pk=ODD[0]).sid == ODD[1], "2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact")
for column, index in (("id", "orders_pkey"), ("sid", "orders_sid_key")):
    plan = Order.objects.filter(**{column: order.sid}).explain()
    check("Index Scan using %s" % index in plan, "lookup by %s as a parameter uses %s" % (column, index))

text = serializers.serialize("json", [found])
expected = ('[{"model": "shop.order", "pk": "%d", "fields": {"sid": "%d", "sids": ["%d", "%d"], "note": "django"}}]'
            % (order.id, order.sid, ODD[0], ODD[1]))
check(text == expected, "the JSON serializer writes every id as a string: " + text)
check(int(json.loads(text)[0]["pk"]) == order.id, "the JSON parses back to the ids")

sys.exit(1 if failed else 0)
