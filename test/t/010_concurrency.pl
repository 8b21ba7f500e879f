# Concurrency: many backends, one generator. Ids are unique, carry
# this node's worker id and the current millisecond, and increase in the order
# calls return: per client, the order of the ids is the order of the calls.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $worker  = 597;    # 0b1001010101: a shifted or masked field shows
my $clients = 8;
my $rounds  = 150;

my $node = snowflake_node('concurrency', $worker);
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
                client int NOT NULL, n bigint NOT NULL);
});

my $before = $node->safe_psql('postgres', 'SELECT clock_timestamp()');

# Every client counts its rounds in :n; each row records its place in the
# client's order of calls: round * 1000, plus 1..10 for the ten single calls
# of one INSERT, plus 100 + 1..200 for the ids of one batch.
$node->pgbench(
	"--no-vacuum --client=$clients --jobs=$clients --transactions=$rounds --define=n=0",
	0,
	[qr{actually processed: 1200/1200}],
	[qr{^(?!.*(ERROR|abort))}s],
	'8 clients insert with snowflake_nextval() and snowflake_nextvals()',
	{
		'010_insert.sql' => q{
\set n :n + 1
INSERT INTO t (client, n) SELECT :client_id, :n * 1000 + g FROM generate_series(1, 10) g;
INSERT INTO t (id, client, n)
  SELECT x.id, :client_id, :n * 1000 + 100 + x.o FROM snowflake_nextvals(200) WITH ORDINALITY AS x(id, o);
}
	});

my $after = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $total = $clients * $rounds * 210;

is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id), count(DISTINCT client) FROM t'),
	"$total|$total|$clients",
	'every row committed, every id distinct, every client wrote');

is($node->safe_psql('postgres',
		"SELECT count(*) FROM t WHERE (snowflake_decode(id)).worker_id <> $worker OR id <= 0"),
	'0', "every id is positive and decodes to worker $worker");

# Sorted by id, each client's rows are in the order its calls were made.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
  SELECT n, lag(n) OVER (PARTITION BY client ORDER BY id) AS previous FROM t) s
WHERE previous >= n}),
	'0',
	'per client, ids increase in the order of the calls');

# An id carries the current millisecond: no id before the first call, and
# none further ahead of the last call than snowflake.max_lead (1 s).
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM t
WHERE snowflake_to_timestamp(id) < date_trunc('milliseconds', '$before'::timestamptz)
   OR snowflake_to_timestamp(id) > '$after'::timestamptz + interval '1 s'}),
	'0',
	'every id carries a time between the first call and the last (plus max_lead)');

my $status = $node->safe_psql('postgres',
	'SELECT worker_id, last_id >= (SELECT max(id) FROM t), generating FROM snowflake_status');
is($status, "$worker|t|t", 'snowflake_status shows the worker and the last id issued');

# Batches from several sessions at once, into a table with no key to catch
# duplicates: the count of distinct ids does.
$node->safe_psql('postgres', 'CREATE TABLE b (id bigint, client int)');
$node->pgbench(
	'--no-vacuum --client=4 --jobs=4 --transactions=2',
	0,
	[qr{actually processed: 8/8}],
	[qr{^(?!.*(ERROR|abort))}s],
	'4 clients call snowflake_nextvals(50000) at once',
	{
		'010_batch.sql' => q{
INSERT INTO b SELECT snowflake_nextvals(50000), :client_id;
}
	});
is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id), count(DISTINCT client) FROM b'),
	'400000|400000|4',
	'4 clients, 2 batches of 50000 each: every id distinct');

# Parallel workers share the generator.
$node->safe_psql('postgres', 'CREATE TABLE big AS SELECT g FROM generate_series(1, 100000) g; ANALYZE big');
my $parallel = q{
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
};
like(
	$node->safe_psql(
		'postgres',
		$parallel . 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT snowflake_nextval() FROM big'),
	qr/Workers Launched: [12].*Parallel Seq Scan.*Output: snowflake_nextval\(\)/s,
	'parallel workers call snowflake_nextval()');
is( $node->safe_psql(
		'postgres',
		$parallel . 'SELECT count(*), count(DISTINCT x) FROM (SELECT snowflake_nextval() x FROM big) s'),
	'100000|100000',
	'ids made in parallel workers are distinct');

# Databases share the generator too: calls alternating between two databases
# within the same milliseconds give one strictly increasing sequence.
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION snowflake');
my $connection = 'dbname=other host=' . $node->host . ' port=' . $node->port;
is( $node->safe_psql(
		'postgres', qq{
CREATE EXTENSION dblink;
SELECT dblink_connect('other', '$connection');
CREATE TABLE alternating AS
SELECT g, snowflake_nextval() AS here,
       (SELECT id FROM dblink('other', 'SELECT snowflake_nextval(), ' || g) AS t(id bigint, g int))
         AS there  -- correlated with g: one call per row
FROM generate_series(1, 2000) g;
SELECT count(*), count(DISTINCT snowflake_to_timestamp(here)) < count(*),
       bool_and(here < there AND there < coalesce(next_here, there + 1))
FROM (SELECT here, there, lead(here) OVER (ORDER BY g) AS next_here FROM alternating) s;
}),
	"OK
2000|t|t",
	'two databases: ids alternating between them, several in one ms, strictly increase');

$node->stop;
done_testing();
