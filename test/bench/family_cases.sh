#!/usr/bin/env bash
# The cases of snowflake meeting bigint, timed on a running server:
#   bash test/bench/family_cases.sh PORT SOCKET_DIR
# Creates the databases m_on (the extension in public) and m_off (in schema sf,
# not on the search_path) with 1M orders, 300k events, 20k parents and 400k
# children, then prints each case: execution time and plan nodes. Run it once
# against a build before a change and once after, on the same machine.
Q="psql -X -q -h $2 -p $1 -U postgres"
$Q -c 'drop database if exists m_on' -c 'drop database if exists m_off' -c 'create database m_on' -c 'create database m_off' >/dev/null
setup="
create table orders (id bigint primary key, n int);
insert into orders select g, g from generate_series(1, 1000000) g;
create table events (id SFT primary key, n int);
insert into events select g * 3, g from generate_series(1, 300000) g;
create table parents (id bigint primary key);
insert into parents select generate_series(1, 20000);
create table kids (pid SFT references parents (id), pad int);
insert into kids select g % 20000 + 1, g from generate_series(1, 400000) g;
create index on kids (pid);
"
$Q -d m_on -c 'create extension snowflake' -c "${setup//SFT/snowflake}" -c "vacuum analyze" >/dev/null 2>&1
$Q -d m_off -c 'create schema sf' -c 'create extension snowflake schema sf' -c "${setup//SFT/sf.snowflake}" -c "vacuum analyze" >/dev/null 2>&1
x() { # db label sql
  out=$($Q -d $1 -c "explain (analyze, costs off, timing off, summary on) $3" 2>&1)
  plan=$(echo "$out" | grep -E 'Scan|Join|Nested|ERROR' | sed -E 's/^[ ->]*//' | cut -c1-60 | paste -sd';' | cut -c1-150)
  t=$(echo "$out" | sed -nE 's/.*Execution Time: ([0-9.]+) ms.*/\1/p')
  printf '%-42s %10s ms  %s\n' "$2" "${t:--}" "$plan"
}
x m_on "join sf=bigint, 9 events" "select * from events e join orders o on o.id = e.id where e.n < 10"
x m_on "bigint = ANY(snowflake[])" "select * from orders where id = any('{3,6,9}'::snowflake[])"
x m_on "bigint IN (select snowflake ...)" "select * from orders where id in (select id from events where n < 10)"
x m_off "off path: id = 5" "select * from events where id = 5"
x m_off "off path: max(id)" "select max(id) from events"
x m_off "off path: ORDER BY id::bigint LIMIT 1" "select id from events order by id::bigint limit 1"
x m_on "WHERE id::bigint = 300" "select * from events where id::bigint = 300"
for db in m_on m_off; do
  t=$($Q -d $db -c '\timing on' -c 'begin' -c 'delete from kids where pid <= 200' -c 'delete from parents where id between 1 and 200' 2>&1 | tail -1)
  printf '%-42s %s\n' "$db: DELETE 200 bigint parents (RI checks on sf FK)" "$t"
done
for q in "create table c1 (x bigint references events (id))" "select id::numeric from events limit 1" "select id::float8 from events limit 1" "select coalesce(e.id, -1) from orders o left join events e on e.id = o.id where o.id = 1" "select greatest(id, -1) from events limit 1" "select case when id > 5 then id else -1 end from events where id = 3"; do
  r=$($Q -d m_on -At -c "$q" 2>&1 | head -1 | cut -c1-90); printf '%-60s => %s\n' "$q" "$r"
done
