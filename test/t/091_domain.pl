# The snowflake type's domain (every int8): whatever any path stores in a
# snowflake column -- text, binary and JSON input, every cast into the type,
# the sentinel idioms, arithmetic, snowflake_nextval(), COPY -- prints and
# reads back through text, binary and JSON, so that pg_dump/pg_restore (custom,
# directory with -j 2, plain), COPY (binary and text, into snowflake and
# bigint columns both ways; a snowflake column's binary COPY is byte for byte
# bigint's) and logical replication (initial sync and streaming, text and
# binary) carry every row; a restore keeps snowflake and bigint columns with
# DEFAULT snowflake_nextval(), their btree, hash and BRIN indexes (answering)
# and defaults that go on above the restored ids; and a 1.0 database holding
# sentinels updates to 1.1 and dumps and restores every row.
# Values: random ids, random int8s of either sign, 0, 1, 2^63-1, the sentinels
# -1, -2 and others, -2^31 and its neighbour, -2^63+1 and -2^63.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();
use SnowflakeTest;

my $tmp = PostgreSQL::Test::Utils::tempdir;

sub logical_node
{
	my ($name, $worker_id) = @_;
	my $node = snowflake_node($name, $worker_id,
		"max_worker_processes = 16\nmax_logical_replication_workers = 6\n",
		allows_streaming => 'logical');
	$node->start;
	return $node;
}
my $node = logical_node('domain', 7);
my $subscriber = logical_node('domain_sub', 8);
sub dsn { return 'host=' . $node->host . ' port=' . $node->port . " dbname=$_[0]"; }

# The table every path stores into: a sentinel default, a CHECK, a partial
# index and an array column, so that a dump restores its schema around them.
my $schema = q{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE domain_t (
    n int PRIMARY KEY,
    path text NOT NULL,
    id snowflake DEFAULT -1 CHECK (id >= -9223372036854775808),
    ids snowflake[]
);
CREATE INDEX domain_t_id ON domain_t (id) WHERE id <> -1;
};

# The values: fixed edges, random bit patterns of either sign (md5 of a
# counter: the same every run) and ids from snowflake_nextval().
my $values = q{
CREATE TABLE vals (k serial PRIMARY KEY, v bigint NOT NULL);
INSERT INTO vals (v) VALUES (0), (1), (9223372036854775807), (-1), (-2), (-42), (-2147483648),
    (-2147483649), (-9223372036854775807), (-9223372036854775808);
INSERT INTO vals (v) SELECT ('x' || md5('domain ' || g))::bit(64)::bigint FROM generate_series(1, 40) g;
INSERT INTO vals (v) SELECT snowflake_nextval() FROM generate_series(1, 10);
};

# Runs SQL that must succeed, as a test (a failure is shown, and the test goes on).
sub runs
{
	my ($on, $db, $sql, $name) = @_;
	my ($rc, $stdout, $stderr) = $on->psql($db, $sql);
	is($rc, 0, $name) or diag $stderr;
}

# The output of a query, or its error (the test goes on).
sub query
{
	my ($on, $db, $sql) = @_;
	my ($rc, $stdout, $stderr) = $on->psql($db, $sql);
	return $rc ? "ERROR: $stderr" : $stdout;
}

# Stores every value through each path into domain_t, numbering rows from
# $base; a row's ids holds its id, a sentinel and an id.
sub store
{
	my ($db, $base) = @_;
	runs($node, $db, qq{
CREATE TEMP SEQUENCE n START $base;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'text', v::text::snowflake FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'bigint', v FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'numeric', v::numeric FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'jsonb string', to_jsonb(v::text)::snowflake FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'jsonb number', to_jsonb(v)::snowflake FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'json string', to_json(v::text)::snowflake FROM vals ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'integer', v::integer FROM vals
    WHERE v BETWEEN -2147483648 AND 2147483647 ORDER BY k;
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'smallint', v::smallint FROM vals
    WHERE v BETWEEN -32768 AND 32767 ORDER BY k;
INSERT INTO domain_t (n, path, id) VALUES
    (nextval('n'), 'literal', '-1'), (nextval('n'), 'literal', -9223372036854775808),
    (nextval('n'), 'coalesce', COALESCE(NULL::snowflake, -1)),
    (nextval('n'), 'greatest', GREATEST(NULL::snowflake, -2)),
    (nextval('n'), 'case', CASE WHEN false THEN 1::snowflake ELSE -3 END),
    (nextval('n'), 'arithmetic', '5'::snowflake - 10),
    (nextval('n'), 'arithmetic', '-9223372036854775807'::snowflake - 1),
    (nextval('n'), 'double precision', -1024::double precision),
    (nextval('n'), 'real', -2.0::real);
INSERT INTO domain_t (n, path) VALUES (nextval('n'), 'default');
INSERT INTO domain_t (n, path, id) SELECT nextval('n'), 'nextval', snowflake_nextval() FROM generate_series(1, 10);
UPDATE domain_t SET ids = ARRAY[id, -1, snowflake_nextval()] WHERE n >= $base;
}, "every path stores every value (rows from $base)");
}

my $rows = 'SELECT n, path, id, ids FROM domain_t ORDER BY n';
my $count = 'SELECT count(*) FROM domain_t';

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', $schema . $values);
store('src', 1);
my $stored = $node->safe_psql('src', $count);
my $negatives = $node->safe_psql('src', 'SELECT count(*) FROM domain_t WHERE id < 0');
note "domain_t: $stored rows, $negatives negative";
cmp_ok($negatives, '>=', 100, "every path stores negatives ($negatives of $stored rows)");

# --- every path stores the value it was given
for my $path ('text', 'bigint', 'numeric', 'jsonb string', 'jsonb number', 'json string')
{
	is(query($node, 'src', "SELECT string_agg(id::text, ',' ORDER BY n) FROM domain_t WHERE path = '$path'"),
		$node->safe_psql('src', 'SELECT string_agg(v::text, \',\' ORDER BY k) FROM vals'),
		"$path: every value stored as given");
}
is(query($node, 'src', q{SELECT string_agg(path || ' ' || id, ',' ORDER BY n) FROM domain_t
                              WHERE path NOT IN ('text', 'bigint', 'numeric', 'jsonb string', 'jsonb number',
                                                 'json string', 'integer', 'smallint', 'nextval')}),
	'literal -1,literal -9223372036854775808,coalesce -1,greatest -2,case -3,arithmetic -5,'
	  . 'arithmetic -9223372036854775808,double precision -1024,real -2,default -1',
	'literals, sentinels, arithmetic, floats and the default store their value');

# --- the value out -> in, in text, binary and JSON
is(query($node, 'src', q{SELECT count(*) FROM domain_t
                              WHERE id::text::snowflake IS DISTINCT FROM id
                                 OR ids::text::snowflake[] IS DISTINCT FROM ids}),
	'0', 'text: every value and array reads back as itself');
is(query($node, 'src', q{SELECT count(*) FROM domain_t
                              WHERE to_json(id)::snowflake IS DISTINCT FROM id
                                 OR to_jsonb(id)::snowflake IS DISTINCT FROM id
                                 OR to_jsonb(id::bigint)::snowflake IS DISTINCT FROM id
                                 OR (to_jsonb(ids)->1)::snowflake IS DISTINCT FROM ids[2]}),
	'0', 'JSON: every value reads back as itself from to_json, to_jsonb (a string) and a JSON number');
is(query($node, 'src', q{SELECT string_agg(DISTINCT jsonb_typeof(to_jsonb(id)), ',') FROM domain_t}),
	'string', 'JSON: to_jsonb of every value is a string');

# binary: COPY out and in, and bigint's wire form into a snowflake column
runs($node, 'src', qq{
CREATE TABLE copy_binary (LIKE domain_t);
CREATE TABLE copy_text (LIKE domain_t);
CREATE TABLE copy_from_bigint (n int, v bigint);
CREATE TABLE copy_into_snowflake (n int, id snowflake);
CREATE TABLE copy_into_bigint (n int, id bigint);
COPY domain_t TO '$tmp/domain.bin' WITH (FORMAT binary);
COPY copy_binary FROM '$tmp/domain.bin' WITH (FORMAT binary);
COPY domain_t TO '$tmp/domain.txt';
COPY copy_text FROM '$tmp/domain.txt';
INSERT INTO copy_from_bigint SELECT k, v FROM vals;
COPY copy_from_bigint TO '$tmp/bigint.bin' WITH (FORMAT binary);
COPY copy_into_snowflake FROM '$tmp/bigint.bin' WITH (FORMAT binary);
COPY domain_t (n, id) TO '$tmp/snowflake.bin' WITH (FORMAT binary);
COPY copy_into_bigint FROM '$tmp/snowflake.bin' WITH (FORMAT binary);
COPY (SELECT id::bigint FROM domain_t ORDER BY n) TO '$tmp/as_bigint.bin' WITH (FORMAT binary);
COPY (SELECT id FROM domain_t ORDER BY n) TO '$tmp/as_snowflake.bin' WITH (FORMAT binary);
}, 'COPY out and in, binary and text');
my $src_rows = $node->safe_psql('src', $rows);
is(query($node, 'src', 'SELECT n, path, id, ids FROM copy_binary ORDER BY n'), $src_rows,
	"binary COPY out and in: all $stored rows, identical");
is(query($node, 'src', 'SELECT n, path, id, ids FROM copy_text ORDER BY n'), $src_rows,
	"text COPY out and in: all $stored rows, identical");
is(query($node, 'src', 'SELECT n, id FROM copy_into_snowflake ORDER BY n'),
	$node->safe_psql('src', 'SELECT k, v FROM vals ORDER BY k'),
	'binary COPY of a bigint column into a snowflake column: every value, negatives included');
is(query($node, 'src', q{SELECT count(*) FROM domain_t WHERE _snowflake_send(id) <> int8send(id::bigint)}),
	'0', 'binary: every value is sent as int8\'s wire form');
is(query($node, 'src', 'SELECT n, id FROM copy_into_bigint ORDER BY n'),
	$node->safe_psql('src', 'SELECT n, id::bigint FROM domain_t ORDER BY n'),
	'binary COPY of a snowflake column into a bigint column: every value');
is(slurp_file("$tmp/as_snowflake.bin"), slurp_file("$tmp/as_bigint.bin"),
	'binary COPY of a snowflake column is byte-identical to that of bigint');

# --- the issue's table: 1,003 rows, one of them a sentinel
$node->safe_psql('src', q{
CREATE TABLE issue (id snowflake);
INSERT INTO issue SELECT snowflake_nextval() FROM generate_series(1, 1002);
INSERT INTO issue SELECT COALESCE(NULL::snowflake, -1);
});
my $issue = 'SELECT count(*) || \' rows, \' || count(*) FILTER (WHERE id = -1) || \' sentinel\' FROM issue';
is(query($node, 'src', $issue), '1003 rows, 1 sentinel', 'the issue\'s table: 1,003 rows, one a sentinel');

# --- a table keyed by ids: snowflake and bigint columns taking
# snowflake_nextval() by default; btree, hash and BRIN indexes
$node->safe_psql('src', q{
CREATE TABLE orders (
    id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
    legacy_id bigint NOT NULL DEFAULT snowflake_nextval(),
    ref snowflake,
    note text
);
CREATE INDEX orders_ref_hash ON orders USING hash (ref);
CREATE INDEX orders_id_brin ON orders USING brin (id);
INSERT INTO orders (note) SELECT 'order ' || g FROM generate_series(1, 500) g;
UPDATE orders SET ref = id WHERE note LIKE '%7';
});
my $orders = 'SELECT id, legacy_id, ref, note FROM orders ORDER BY id';
my $columns = q{
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid)
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relname IN ('orders', 'domain_t') AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY 1, a.attnum};
my $indexes = q{SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index
                 WHERE indrelid IN ('orders'::regclass, 'domain_t'::regclass)
                 ORDER BY indexrelid::regclass::text};
like($node->safe_psql('src', $columns), qr/^orders\|id\|snowflake\|snowflake_nextval\(\)\norders\|legacy_id\|bigint\|snowflake_nextval\(\)$/m,
	'orders: a snowflake and a bigint column with DEFAULT snowflake_nextval()');

# --- pg_dump / pg_restore: custom, directory with -j 2, plain
my @connection = ('-h', $node->host, '-p', $node->port);
my $src_issue = $node->safe_psql('src', 'SELECT id FROM issue ORDER BY id');
my $src_orders = $node->safe_psql('src', $orders);
my $src_columns = $node->safe_psql('src', $columns);
my $src_indexes = $node->safe_psql('src', $indexes);
my $src_max = $node->safe_psql('src', 'SELECT max(greatest(id::bigint, legacy_id)) FROM orders');
sub restored
{
	my ($db, $what) = @_;
	is(query($node, $db, $count), $stored, "$what: all $stored rows of domain_t restored");
	is(query($node, $db, $rows), $src_rows, "$what: every row identical");
	is(query($node, $db, $issue), '1003 rows, 1 sentinel', "$what: the issue's table, all 1,003 rows");
	is(query($node, $db, 'SELECT id FROM issue ORDER BY id'), $src_issue, "$what: the issue's table identical");
	is(query($node, $db, q{SET enable_seqscan = off; SELECT count(*) FROM domain_t WHERE id <> -1 AND id < 0}),
		$node->safe_psql('src', 'SELECT count(*) FROM domain_t WHERE id <> -1 AND id < 0'),
		"$what: the partial index restored and answering");
	is(query($node, $db, "INSERT INTO domain_t (n, path) VALUES (0, 'after') RETURNING id"), '-1',
		"$what: the sentinel default restored");
	is(query($node, $db, $orders), $src_orders, "$what: orders identical");
	is(query($node, $db, $columns), $src_columns, "$what: column types and defaults identical");
	is(query($node, $db, $indexes), $src_indexes, "$what: btree, hash and BRIN indexes restored");
	is(query($node, $db, q{SET enable_seqscan = off;
	    SELECT count(*) FROM orders WHERE id >= snowflake_from_timestamp(now() - interval '1 hour')}),
		'500', "$what: the primary key answers a time-range query");
	is(query($node, $db, q{SET enable_seqscan = off;
	    SELECT count(*) FROM orders WHERE ref = (SELECT ref FROM orders WHERE note = 'order 7')}),
		'1', "$what: the hash index finds a row");
	is(query($node, $db, qq{INSERT INTO orders (note) VALUES ('after');
	    SELECT id > $src_max AND legacy_id > $src_max
	           AND (snowflake_decode(id)).worker_id = 7 AND (snowflake_decode(legacy_id)).worker_id = 7
	      FROM orders WHERE note = 'after'}), 't',
		"$what: the defaults go on, above the restored ids");
}

$node->command_ok([ 'pg_dump', '-Fc', @connection, '-d', 'src', '-f', "$tmp/src.dump" ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE custom');
$node->command_ok([ 'pg_restore', '--exit-on-error', @connection, '-d', 'custom', "$tmp/src.dump" ],
	'pg_restore of the custom format');
restored('custom', 'custom format');

$node->command_ok([ 'pg_dump', '-Fd', '-j', '2', @connection, '-d', 'src', '-f', "$tmp/src.dir" ],
	'pg_dump -Fd -j 2');
$node->safe_psql('postgres', 'CREATE DATABASE directory');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-j', '2', @connection, '-d', 'directory', "$tmp/src.dir" ],
	'pg_restore -j 2 of the directory format');
restored('directory', 'directory format, -j 2');

$node->command_ok([ 'pg_dump', '-Fp', @connection, '-d', 'src', '-f', "$tmp/src.sql" ], 'pg_dump -Fp');
$node->safe_psql('postgres', 'CREATE DATABASE plain');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', @connection, '-d', 'plain', '-f', "$tmp/src.sql" ],
	'psql restores the plain format');
restored('plain', 'plain format');

# --- logical replication: initial sync, then streaming; text and binary
$node->safe_psql('src', 'CREATE PUBLICATION domain_p FOR TABLE domain_t');
my %subscription = (sub_text => 'false', sub_binary => 'true');
for my $db (sort keys %subscription)
{
	$subscriber->safe_psql('postgres', "CREATE DATABASE $db");
	$subscriber->safe_psql($db, $schema);
	$subscriber->safe_psql($db, "CREATE SUBSCRIPTION $db CONNECTION '" . dsn('src')
		  . "' PUBLICATION domain_p WITH (binary = $subscription{$db})");
}
sub errors_of
{
	# every *error_count column (19 splits sync_error_count into tables' and sequences')
	return "SELECT coalesce(sum(e.value::bigint), 0) FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e"
	  . " WHERE e.key LIKE '%error_count' AND s.subname = '$_[0]'";
}
# Every table of both subscriptions synchronized and the publisher's WAL
# applied, or an apply or sync error: polled, bounded.
sub replicated
{
	my ($what) = @_;
	my $lsn = $node->lsn('write');
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $errors = join '', map { $subscriber->safe_psql('postgres', errors_of($_)) } sort keys %subscription;
		last if $errors ne '00';
		last if join('', map {
			$subscriber->safe_psql($_, "SELECT count(*) FILTER (WHERE srsubstate NOT IN ('r', 's')) FROM pg_subscription_rel")
		} sort keys %subscription) eq '00'
		  && $node->safe_psql('src', "SELECT count(*) FROM pg_stat_replication WHERE application_name IN ('sub_text', 'sub_binary') AND replay_lsn >= '$lsn'") eq '2';
		Time::HiRes::sleep(0.2);
	}
	for my $db (sort keys %subscription)
	{
		is(query($subscriber, 'postgres', errors_of($db)), '0', "$what, $db: no apply or sync error");
		is(query($subscriber, $db, $count), $node->safe_psql('src', $count),
			"$what, $db: every row (" . $node->safe_psql('src', $count) . ')');
		is(query($subscriber, $db, $rows), $node->safe_psql('src', $rows), "$what, $db: every row identical");
	}
}
replicated('initial sync');
store('src', 100000);
$node->safe_psql('src', q{UPDATE domain_t SET id = ~id, ids = array_append(ids, (~id)::snowflake) WHERE n % 7 = 0;
                          DELETE FROM domain_t WHERE n % 11 = 0});
replicated('streaming inserts, updates and deletes');
cmp_ok(query($subscriber, 'sub_binary', 'SELECT count(*) FROM domain_t WHERE n >= 100000 AND id < 0'),
	'>=', 100, 'streaming carried negatives');
$subscriber->safe_psql($_, "DROP SUBSCRIPTION $_") for sort keys %subscription;

# --- 1.0, the frozen script, holding sentinels: ALTER EXTENSION UPDATE, dump, restore
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{
CREATE EXTENSION snowflake VERSION '1.0';
CREATE TABLE legacy (n serial PRIMARY KEY, id snowflake DEFAULT snowflake_nextval(), parent snowflake);
INSERT INTO legacy (id, parent) SELECT snowflake_nextval(), NULL FROM generate_series(1, 1000);
-- the sentinels 1.0 stores: integers widened, COALESCE, GREATEST, CASE
INSERT INTO legacy (id, parent) VALUES (-1, -1), (0, -2147483648), (COALESCE(NULL::snowflake, -1), GREATEST(NULL::snowflake, -2)),
    (CASE WHEN false THEN 1::snowflake ELSE -3 END, -1);
UPDATE legacy SET parent = COALESCE(parent, -1) WHERE n % 2 = 0;
});
my $legacy = 'SELECT n, id, parent FROM legacy ORDER BY n';
my $old_rows = $node->safe_psql('old', $legacy);
is(query($node, 'old', 'SELECT count(*) || \' rows, \' || count(*) FILTER (WHERE id < 0 OR parent < 0) || \' with a sentinel\' FROM legacy'),
	'1004 rows, 504 with a sentinel', '1.0: 1,004 rows, 504 with a sentinel');

# a dump of the 1.0 database restores (CREATE EXTENSION there makes the default version)
$node->command_ok([ 'pg_dump', '-Fc', @connection, '-d', 'old', '-f', "$tmp/old.dump" ], 'pg_dump -Fc of the 1.0 database');
$node->safe_psql('postgres', 'CREATE DATABASE old_restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', @connection, '-d', 'old_restored', "$tmp/old.dump" ],
	'pg_restore of the 1.0 database');
is(query($node, 'old_restored', $legacy), $old_rows, 'the 1.0 database restored: every row identical');

$node->safe_psql('old', "ALTER EXTENSION snowflake UPDATE TO '1.1'");
is(query($node, 'old', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), '1.1', 'updated to 1.1');
is(query($node, 'old', $legacy), $old_rows, 'after the update: every row as it was');
for my $format ('c', 'p')
{
	my $db = "updated_$format";
	$node->command_ok([ 'pg_dump', "-F$format", @connection, '-d', 'old', '-f', "$tmp/$db.dump" ],
		"pg_dump -F$format after the update");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->command_ok(
		$format eq 'c'
		? [ 'pg_restore', '--exit-on-error', @connection, '-d', $db, "$tmp/$db.dump" ]
		: [ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', @connection, '-d', $db, '-f', "$tmp/$db.dump" ],
		"restore of -F$format after the update");
	is(query($node, $db, 'SELECT count(*) FROM legacy'), '1004', "-F$format after the update: all 1,004 rows restored");
	is(query($node, $db, $legacy), $old_rows, "-F$format after the update: every row identical");
}

# --- what still refuses: text that is no int8, and decoding a negative value
my ($rc, $stdout, $stderr) = $node->psql('src', "\\set VERBOSITY verbose\nSELECT '-9223372036854775809'::snowflake");
like($stderr, qr/ERROR:  22003: value "-9223372036854775809" is out of range for type snowflake/,
	'below -2^63: out of range (22003)');
($rc, $stdout, $stderr) = $node->psql('src', "\\set VERBOSITY verbose\nSELECT '--1'::snowflake");
like($stderr, qr/ERROR:  22P02: invalid input syntax for type snowflake: "--1"/, '"--1": invalid syntax (22P02)');
($rc, $stdout, $stderr) = $node->psql('src', "\\set VERBOSITY verbose\nSELECT snowflake_decode(id) FROM domain_t WHERE id = -1 LIMIT 1");
like($stderr, qr/ERROR:  22003: snowflake id must not be negative: -1/, 'decoding a sentinel: 22003');

$node->stop;
$subscriber->stop;
done_testing();
