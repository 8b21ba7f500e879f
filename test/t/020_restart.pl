# Clean restarts (restart safety): ids keep increasing across them,
# the lease file always covers what was issued, and a clean shutdown leaves no
# lease span behind: it shrinks the lease to the last id, so the first id after
# each restart is at most max_lead (what ids before may have borrowed) ahead of
# the clock read right before it, never a lease span.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $span_ms = 2000;    # snowflake.lease_span and max_lead, the defaults (docs/reference.md)
my $max_lead_ms = 1000;
my $node = snowflake_node('restart', 11,
	"snowflake.lease_span = ${span_ms}ms\nsnowflake.max_lead = ${max_lead_ms}ms\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), phase int NOT NULL);
});

sub insert_phase
{
	my ($phase, $rows) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO t (phase) SELECT $phase FROM generate_series(1, $rows)");
	return $node->safe_psql('postgres',
		"SELECT min(id), max(id) FROM t WHERE phase = $phase");
}

# Phase 1, and the lease while the node runs.
my (undef, $max1) = split /\|/, insert_phase(1, 20000);
my $lease = read_lease($node);
ok(defined $lease, 'the lease file exists while the node runs');
is($lease->{epoch_unix_ms}, DEFAULT_EPOCH_MS, 'the lease names the default epoch');
cmp_ok($lease->{lease_ms}, '>=', time_of($max1),
	'the durable lease covers every id issued');

# A clean stop: the lease shrinks but still covers every id issued.
$node->stop;
$lease = read_lease($node);
ok(defined $lease, 'the lease file exists after a clean stop');
is($lease->{lease_ms}, time_of($max1),
	'after a clean stop the lease is the last id issued: it covers it, no span past it');

$node->start;

# The first id after the restart: greater than every id before, and at most
# max_lead ahead of the clock (the +1: the first millisecond above the floor).
my ($first, $lead_ms, $after_ms) = id_and_lead($node);
cmp_ok($first, '>', $max1, 'the first id after a clean restart is greater than every id before');
cmp_ok(time_of($first), '<=', $lease->{lease_ms} + 1 > $after_ms ? $lease->{lease_ms} + 1 : $after_ms,
	'the first id after a clean restart is in the first millisecond above the lease left (or the clock\'s)');
cmp_ok($lead_ms, '<=', $max_lead_ms + 1,
	"the first id after a clean restart is at most max_lead ahead of the clock (lead $lead_ms ms)");

my ($min2, $max2) = split /\|/, insert_phase(2, 20000);
cmp_ok($min2, '>', $first, 'ids after the restart keep increasing');

# pg_ctl restart, then two restarts with no id issued in between.
$node->restart;
($first, $lead_ms) = id_and_lead($node);
cmp_ok($lead_ms, '<=', $max_lead_ms + 1,
	"the first id after pg_ctl restart is at most max_lead ahead of the clock (lead $lead_ms ms)");
my ($min3, $max3) = split /\|/, insert_phase(3, 1000);
cmp_ok($first, '>', $max2, 'the first id after pg_ctl restart is greater than every id before');
cmp_ok($min3, '>', $first, 'ids after pg_ctl restart keep increasing');

$node->restart;
$node->restart;
($first, $lead_ms) = id_and_lead($node);
cmp_ok($lead_ms, '<=', $max_lead_ms + 1,
	"after two restarts with no id in between, the first id is at most max_lead ahead of the clock (lead $lead_ms ms)");
my ($min4, $max4) = split /\|/, insert_phase(4, 1000);
cmp_ok($first, '>', $max3,
	'after two restarts with no id in between, the first id is greater than every id before');
cmp_ok($min4, '>', $max3,
	'after two restarts with no id in between, ids are greater than every id before');

# The whole table: one increasing sequence of phases.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT phase, lag(phase) OVER (ORDER BY id) AS previous FROM t) s
WHERE previous > phase}),
	'0',
	'sorted by id, the rows are in the order they were inserted');

my $status = $node->safe_psql('postgres',
	"SELECT lease_until >= snowflake_to_timestamp($max4), last_id >= $max4, generating
	 FROM snowflake_status");
is($status, 't|t|t', 'snowflake_status: the lease covers the last id issued');

# During a pause the lease writer keeps the lease ahead of the clock, not just
# of the last id, for one lease span (2 s) after it, so that a call soon after
# a pause does not wait on disk: the lease comes to reach further past the
# last id than any extension for that id alone would (the span, 2 s).
ok( $node->poll_query_until(
		'postgres', q{
SELECT lease_until > snowflake_to_timestamp(last_id) + interval '2.5 s' FROM snowflake_status}),
	'in a pause, the lease writer keeps the lease ahead of the clock');

$node->stop;
done_testing();
