# The pg_partman 4.7 and 5 recipes (docs/adoption.md, "Time partitioning"): an id-keyed table
# partitioned per hour (and per day) by id ranges that match UTC time exactly,
# made by create_parent and run_maintenance, rows routed by their ids (given
# at chosen times, and by DEFAULT snowflake_nextval()), and retention by id
# span dropping exactly the partitions whose every id is older than the span;
# and the documented recipe run exactly as printed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $node = snowflake_node('partman', 3);
$node->start;
# Debian packages pg_partman 4.7 for 15, 5.2 for 17 and 5.5 for 18 (test/pg-toolchain
# installs it), none for 19: that leg skips, loudly.
if ($node->safe_psql('postgres', q{SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_partman'}) eq '0'
	&& $node->safe_psql('postgres', 'SHOW server_version_num') >= 160000)
{
	diag('SKIPPED: pg_partman is not installed for this PostgreSQL major (Debian packages it for 15, 17 and 18)');
	plan skip_all => 'SKIPPED: pg_partman is not installed for this major (Debian packages it for 15, 17 and 18)';
}
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
SET TimeZone = 'UTC';
});
my $partman_version = $node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'});
like($partman_version, qr/^(4\.7|5)\./, "pg_partman 4.7 or 5 is installed ($partman_version)");
my $partman4 = $partman_version =~ /^4\./;
# create_parent as each major release calls it: 4.7 takes the type 'native'
# after the interval, 5 partitions natively only and has no such argument
sub partman
{
	my ($sql) = @_;
	$sql =~ s/'id', 'native', /'id', /g unless $partman4;
	return $sql;
}

# Every partition of a table, one line each: "from_ts|to_ts|rows", oldest first.
sub partitions_of
{
	my ($table) = @_;
	return $node->safe_psql('postgres', qq{
        SET TimeZone = 'UTC';
        SELECT p.from_ts, p.to_ts, (SELECT count(*) FROM $table e WHERE e.tableoid = p.partition)
          FROM snowflake_partitions('$table') p WHERE p.from_id IS NOT NULL ORDER BY p.from_id});
}

# The hour the test starts in; the rows given explicitly are in the hours
# before it, so nothing below depends on when the test runs.
my $hour = $node->safe_psql('postgres',
	q{SET TimeZone = 'UTC'; SELECT date_trunc('hour', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'});

# create_parent: the interval is the ids of one hour; the first partition is
# the one holding the id of six hours ago (pg_partman rounds it down to a
# multiple of the interval: an hour boundary, as the default epoch is one).
$node->safe_psql('postgres', partman(qq{
CREATE TABLE events (id bigint NOT NULL DEFAULT snowflake_nextval(), body text NOT NULL, PRIMARY KEY (id))
    PARTITION BY RANGE (id);
SELECT partman.create_parent('public.events', 'id', 'native', snowflake_id_span('1 hour')::text, p_premake => 4,
    p_start_partition => snowflake_from_timestamp('$hour'::timestamptz - interval '6 hours' + interval '17 minutes')::text);
}));
is(partitions_of('events'), $node->safe_psql('postgres', qq{
    SET TimeZone = 'UTC';
    SELECT h, h + interval '1 hour', 0 FROM generate_series('$hour'::timestamptz - interval '6 hours',
                                                            '$hour'::timestamptz - interval '2 hours', '1 hour') h}),
    'create_parent made the partitions of the hours -6 to -2, each exactly one UTC hour of ids');

# Rows at chosen times (the IMMUTABLE form, with the epoch): the first id of
# each hour, one in the middle, the last id of the hour (the first of the
# next minus one), and one with worker and sequence bits set.
$node->safe_psql('postgres', qq{
INSERT INTO events (id, body)
SELECT id, format('hour %s, %s', k, what)
  FROM generate_series(2, 6) k,
       LATERAL (SELECT '$hour'::timestamptz - k * interval '1 hour' AS h) s,
       LATERAL (VALUES
           (snowflake_from_timestamp(h, '2024-01-01 00:00:00+00'), 'first id'),
           (snowflake_from_timestamp(h + interval '30 minutes', '2024-01-01 00:00:00+00'), 'middle'),
           (snowflake_from_timestamp(h + interval '1 hour', '2024-01-01 00:00:00+00') - 1, 'last id'),
           (snowflake_from_timestamp(h + interval '59 minutes', '2024-01-01 00:00:00+00') + (1023 << 12) + 4095, 'all bits'))
       AS v(id, what);
});
is(partitions_of('events'), $node->safe_psql('postgres', qq{
    SET TimeZone = 'UTC';
    SELECT h, h + interval '1 hour', 4 FROM generate_series('$hour'::timestamptz - interval '6 hours',
                                                            '$hour'::timestamptz - interval '2 hours', '1 hour') h}),
    'the four rows of each hour, its first and last id included, sit in the partition of that hour');

# run_maintenance premakes 4 partitions past the newest row's; then a row
# made now by the DEFAULT lands in the partition of this hour, and the next
# maintenance premakes past it. pg_partman 5 reads the newest id as
# trunc(max(id))::bigint, through double precision: the last id of an hour
# (the newest row here) reads as the next hour's first, one partition further
# (docs/adoption.md says so).
my $newest_id = $partman4 ? 'max(id)' : 'trunc(max(id))::bigint';
$node->safe_psql('postgres', q{SELECT partman.run_maintenance('public.events')});
is($node->safe_psql('postgres', q{
    SELECT max(to_ts) FROM snowflake_partitions('events')}),
   $node->safe_psql('postgres', qq{
    SELECT date_trunc('hour', snowflake_to_timestamp($newest_id) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '5 hours'
      FROM events}),
   "run_maintenance premade the partitions of the 4 hours after the newest row ($newest_id)");
$node->safe_psql('postgres', q{INSERT INTO events (body) SELECT 'now, ' || g FROM generate_series(1, 100) g});
$node->safe_psql('postgres', q{SELECT partman.run_maintenance('public.events')});
my $newest_hour = $node->safe_psql('postgres', q{
    SET TimeZone = 'UTC';
    SELECT date_trunc('hour', snowflake_to_timestamp(max(id)) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM events});
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM events e JOIN snowflake_partitions('events') p ON p.partition = e.tableoid
     WHERE e.body LIKE 'now, %'
       AND snowflake_to_timestamp(e.id) >= p.from_ts AND snowflake_to_timestamp(e.id) < p.to_ts
       AND (snowflake_decode(e.id)).worker_id = 3}),
   '100', 'the rows made by DEFAULT snowflake_nextval() sit in the partition of their hour');
is(partitions_of('events') =~ s/\|\d+$//mgr, $node->safe_psql('postgres', qq{
    SET TimeZone = 'UTC';
    SELECT h, h + interval '1 hour' FROM generate_series('$hour'::timestamptz - interval '6 hours',
                                                         '$newest_hour'::timestamptz + interval '4 hours', '1 hour') h}),
    'one partition per UTC hour, with no gap, from the first to 4 hours past the newest row');
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM events e JOIN snowflake_partitions('events') p ON p.partition = e.tableoid
     WHERE NOT (e.id >= p.from_id AND e.id < p.to_id
                AND date_trunc('hour', snowflake_to_timestamp(e.id) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = p.from_ts)}),
   '0', 'every row sits in the partition of its id\'s hour');
is($node->safe_psql('postgres', q{SELECT count(*) FROM ONLY events_default}), '0',
    'the default partition is empty');

# Retention by id span: pg_partman drops the partitions whose upper bound is
# at least the span below the newest id, that is, whose every id was made
# more than 3 hours before the newest row.
my $expired = $node->safe_psql('postgres', q{
    SELECT string_agg(partition::text, ',' ORDER BY from_id) FROM snowflake_partitions('events')
     WHERE to_id <= (SELECT max(id) FROM events) - snowflake_id_span('3 hours')});
my @expired = split /,/, $expired;
cmp_ok(scalar(@expired), '>=', 3, 'three or more hourly partitions hold only ids over 3 hours older than the newest');
my $partitions_kept = $node->safe_psql('postgres', qq{
    SELECT string_agg(partition::text, ',' ORDER BY from_id) FROM snowflake_partitions('events')
     WHERE partition::text <> ALL (string_to_array('$expired', ','))});
my $rows_kept = $node->safe_psql('postgres', qq{
    SELECT count(*) FROM events WHERE tableoid::regclass::text <> ALL (string_to_array('$expired', ','))});
$node->safe_psql('postgres', q{
UPDATE partman.part_config SET retention = snowflake_id_span('3 hours')::text, retention_keep_table = false
 WHERE parent_table = 'public.events';
SELECT partman.run_maintenance('public.events');
});
is($node->safe_psql('postgres', q{
    SELECT string_agg(partition::text, ',' ORDER BY from_id) FROM snowflake_partitions('events')}),
   $partitions_kept, 'retention dropped exactly the expired partitions');
is($node->safe_psql('postgres', qq{
    SELECT count(*) FROM pg_class WHERE relname = ANY (string_to_array('$expired', ','))}),
   '0', 'the expired partitions are gone, tables included');
is($node->safe_psql('postgres', q{SELECT count(*) FROM events}), $rows_kept,
    'the rows of the other partitions are all kept');
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM events WHERE id < (SELECT max(id) FROM events) - snowflake_id_span('4 hours')}),
   '0', 'no row more than 4 hours older than the newest is left');

# Per day: the same with the ids of one UTC day.
$node->safe_psql('postgres', partman(q{
CREATE TABLE daily (id bigint NOT NULL DEFAULT snowflake_nextval(), PRIMARY KEY (id)) PARTITION BY RANGE (id);
SELECT partman.create_parent('public.daily', 'id', 'native', snowflake_id_span('1 day')::text, p_premake => 2,
    p_start_partition => snowflake_from_timestamp(now())::text);
INSERT INTO daily DEFAULT VALUES;
}));
is($node->safe_psql('postgres', q{
    SELECT count(*) FILTER (WHERE from_ts = date_trunc('day', from_ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                              AND to_ts = from_ts + interval '1 day'), count(*)
      FROM snowflake_partitions('daily') WHERE from_id IS NOT NULL}),
   '3|3', 'daily partitions each hold exactly one UTC day of ids');
is($node->safe_psql('postgres', q{
    SELECT p.from_ts = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
      FROM daily d JOIN snowflake_partitions('daily') p ON p.partition = d.tableoid}),
   't', 'a row made now sits in the partition of today (UTC)');

# After a quiet period longer than premake (here: a set that starts 10 hours
# ago with one premade partition and no rows), the partition of the current
# hour is made from its first id, and new rows go there, not to the default.
$node->safe_psql('postgres', partman(q{
CREATE TABLE quiet (id bigint NOT NULL DEFAULT snowflake_nextval(), PRIMARY KEY (id)) PARTITION BY RANGE (id);
SELECT partman.create_parent('public.quiet', 'id', 'native', snowflake_id_span('1 hour')::text, p_premake => 1,
    p_start_partition => snowflake_from_timestamp(now() - interval '10 hours')::text);
}));
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM snowflake_partitions('quiet') WHERE from_ts > now() - interval '8 hours'}),
   '0', 'a quiet set: no partition for the last hours');
$node->safe_psql('postgres', q{
SELECT partman.create_partition_id('public.quiet', ARRAY[(snowflake_partition_bounds(now(), 'hour')).from_id]);
INSERT INTO quiet SELECT FROM generate_series(1, 10);
SELECT partman.run_maintenance('public.quiet');
});
is($node->safe_psql('postgres', q{
    SELECT count(*) FROM quiet q JOIN snowflake_partitions('quiet') p ON p.partition = q.tableoid
     WHERE p.to_ts = p.from_ts + interval '1 hour'
       AND snowflake_to_timestamp(q.id) >= p.from_ts AND snowflake_to_timestamp(q.id) < p.to_ts}),
   '10', 'create_partition_id with the first id of the hour: new rows sit in the partition of their hour');
is($node->safe_psql('postgres', q{
    SELECT max(to_ts) = date_trunc('hour', snowflake_to_timestamp(max(q.id)) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                        + interval '2 hours'
      FROM snowflake_partitions('quiet'), quiet q}),
   't', 'and run_maintenance premakes after it again');

# The documented recipe, exactly as printed there (its 7-day retention set,
# not NULL, and applied), in a database of its own: then partitions of eight and six days ago, a row
# now, maintenance: retention drops the first and keeps the second.
my $release = $partman4 ? '4\.7' : '5';
my ($readme) = slurp_file(($ENV{TESTDIR} // '.') . '/docs/adoption.md') =~ /\*\*pg_partman $release\*\*.*?```sql\n(.*?)```/s
  or die "no pg_partman $release recipe in docs/adoption.md";
$node->safe_psql('postgres', 'CREATE DATABASE recipe');
$node->safe_psql('recipe', 'CREATE EXTENSION snowflake');
$node->safe_psql('recipe', $readme);
is($node->safe_psql('recipe', q{SELECT retention = snowflake_id_span('7 days')::text, retention_keep_table
                                   FROM partman.part_config WHERE parent_table = 'public.events'}),
   't|f', 'the documented recipe as printed: retention is 7 days of ids, partitions are dropped');
$node->safe_psql('recipe', q{
SELECT partman.create_partition_id('public.events', ARRAY[(snowflake_partition_bounds(now() - interval '8 days', 'hour')).from_id]);
SELECT partman.create_partition_id('public.events', ARRAY[(snowflake_partition_bounds(now() - interval '6 days', 'hour')).from_id]);
INSERT INTO events (body) VALUES ('now');
SELECT partman.run_maintenance('public.events');
});
is($node->safe_psql('recipe', q{
    SELECT string_agg(round(extract(epoch FROM now() - from_ts) / 86400)::text, ',' ORDER BY from_ts)
      FROM snowflake_partitions('events') WHERE from_ts < now() - interval '1 day'}),
   '6', 'the documented recipe: retention dropped the partition of 8 days ago and kept the one of 6 days ago');

$node->stop;
done_testing();
