# pg_dump -Fc / pg_restore of tables keyed by snowflake ids, and binary COPY
# of snowflake columns (binary-compatible with int8 on the wire).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 3
});
$node->start;
my $tmp = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (
    id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
    legacy_id bigint NOT NULL DEFAULT snowflake_nextval(),
    ref snowflake,
    note text
);
CREATE INDEX orders_ref_hash ON orders USING hash (ref);
CREATE INDEX orders_id_brin ON orders USING brin (id);
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), at timestamptz);
INSERT INTO orders (note) SELECT 'order ' || g FROM generate_series(1, 500) g;
UPDATE orders SET ref = id WHERE note LIKE '%7';
INSERT INTO orders (id, legacy_id, ref, note)
    VALUES (0, 0, 0, 'zero'), (9223372036854775807, 9223372036854775807, 9223372036854775807, 'max');
INSERT INTO events (at) SELECT now() FROM generate_series(1, 100);
});

my $orders = 'SELECT id, legacy_id, ref, note FROM orders ORDER BY id';
my $events = 'SELECT id, at FROM events ORDER BY id';
my $columns = q{
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid)
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relname IN ('orders', 'events') AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY 1, a.attnum};
my $indexes = q{SELECT indexrelid::regclass, pg_get_indexdef(indexrelid) FROM pg_index
                 WHERE indrelid IN ('orders'::regclass, 'events'::regclass)
                 ORDER BY indexrelid::regclass::text};
my $src_orders = $node->safe_psql('src', $orders);
my $src_events = $node->safe_psql('src', $events);
is($node->safe_psql('src', 'SELECT count(*) FROM orders'), '502', 'source table filled');

# --- pg_dump -Fc / pg_restore into a second database
my $dump = "$tmp/src.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-h', $node->host, '-p', $node->port, '-d', 'src', '-f', $dump ],
    'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok(
    [ 'pg_restore', '--exit-on-error', '-h', $node->host, '-p', $node->port, '-d', 'dst', $dump ],
    'pg_restore into a second database');

is($node->safe_psql('dst', $orders), $src_orders, 'orders: rows identical after restore');
is($node->safe_psql('dst', $events), $src_events, 'events: rows identical after restore');
is($node->safe_psql('dst', $columns), $node->safe_psql('src', $columns),
    'column types and defaults identical after restore');
like($node->safe_psql('dst', $columns), qr/^orders\|id\|snowflake\|snowflake_nextval\(\)$/m,
    'orders.id is still a snowflake with DEFAULT snowflake_nextval()');
like($node->safe_psql('dst', $columns), qr/^orders\|legacy_id\|bigint\|snowflake_nextval\(\)$/m,
    'orders.legacy_id is still a bigint with DEFAULT snowflake_nextval()');
like($node->safe_psql('dst', $columns), qr/^events\|id\|bigint\|snowflake_nextval\(\)$/m,
    'events.id is still a bigint with DEFAULT snowflake_nextval()');
is($node->safe_psql('dst', $indexes), $node->safe_psql('src', $indexes),
    'btree, hash and brin indexes restored');
is($node->safe_psql('dst', q{
    SET enable_seqscan = off;
    SELECT count(*) FROM orders WHERE id >= snowflake_from_timestamp(now() - interval '1 hour')
                                  AND id < 9223372036854775807}), '500',
    'restored primary key answers a time-range query');
is($node->safe_psql('dst', q{
    SET enable_seqscan = off; SET enable_bitmapscan = on;
    SELECT count(*) FROM orders WHERE ref = (SELECT ref FROM orders WHERE note = 'order 7')}), '1',
    'restored hash index finds a row');

# the restored defaults keep generating, after the restored ids
my $max_before = $node->safe_psql('dst',
    'SELECT max(id::bigint) FROM orders WHERE id < 9223372036854775807');
$node->safe_psql('dst', q{INSERT INTO orders (note) VALUES ('after restore')});
is($node->safe_psql('dst', qq{
    SELECT id::bigint > $max_before AND legacy_id > $max_before
           AND (snowflake_decode(id)).worker_id = 3 AND (snowflake_decode(legacy_id)).worker_id = 3
      FROM orders WHERE note = 'after restore'}), 't',
    'an INSERT after restore takes new ids from the defaults, after the restored ones');

# --- binary COPY
my $bin_sf = "$tmp/orders_id.bin";
my $bin_big = "$tmp/events_id.bin";
$node->safe_psql('src', qq{
COPY orders (id, ref) TO '$bin_sf' WITH (FORMAT binary);
COPY events (id) TO '$bin_big' WITH (FORMAT binary);
CREATE TABLE copy_sf (id snowflake PRIMARY KEY, ref snowflake);
CREATE TABLE copy_big (id bigint PRIMARY KEY, ref bigint);
CREATE TABLE copy_from_big (id snowflake PRIMARY KEY);
COPY copy_sf FROM '$bin_sf' WITH (FORMAT binary);
COPY copy_big FROM '$bin_sf' WITH (FORMAT binary);
COPY copy_from_big FROM '$bin_big' WITH (FORMAT binary);
});
is($node->safe_psql('src', 'SELECT id, ref FROM copy_sf ORDER BY id'),
    $node->safe_psql('src', 'SELECT id, ref FROM orders ORDER BY id'),
    'binary COPY snowflake -> snowflake column round trips');
is($node->safe_psql('src', 'SELECT id, ref FROM copy_big ORDER BY id'),
    $node->safe_psql('src', 'SELECT id, ref FROM orders ORDER BY id'),
    'binary COPY snowflake -> bigint column round trips');
is($node->safe_psql('src', 'SELECT id FROM copy_from_big ORDER BY id'),
    $node->safe_psql('src', 'SELECT id FROM events ORDER BY id'),
    'binary COPY bigint -> snowflake column round trips');
is($node->safe_psql('src', q{SELECT count(*) FROM copy_big b JOIN orders o ON o.id = b.id
                              WHERE o.id::bigint = b.id AND o.ref IS NOT DISTINCT FROM b.ref}),
    '502', 'every copied bigint equals its snowflake');

# a negative bigint (a sentinel), binary-copied into a snowflake column, is
# read as it is (test/t/091_domain.pl: every value, every path)
my $bin_neg = "$tmp/negative.bin";
$node->safe_psql('src', qq{
CREATE TABLE negatives (id bigint);
INSERT INTO negatives VALUES (1), (-1), (-9223372036854775808);
COPY negatives TO '$bin_neg' WITH (FORMAT binary);
CREATE TABLE copy_neg (id snowflake);
COPY copy_neg FROM '$bin_neg' WITH (FORMAT binary);
});
is($node->safe_psql('src', 'SELECT string_agg(id::text, \',\' ORDER BY id) FROM copy_neg'),
    '-9223372036854775808,-1,1', 'binary COPY of negative bigints into a snowflake column keeps them');

# binary COPY out of a snowflake column is byte for byte int8's
$node->safe_psql('src', qq{
COPY (SELECT id::bigint FROM orders ORDER BY id) TO '$tmp/as_bigint.bin' WITH (FORMAT binary);
COPY (SELECT id FROM orders ORDER BY id) TO '$tmp/as_snowflake.bin' WITH (FORMAT binary);
});
is(slurp_file("$tmp/as_snowflake.bin"), slurp_file("$tmp/as_bigint.bin"),
    'binary COPY of a snowflake column is byte-identical to that of bigint');

done_testing();
