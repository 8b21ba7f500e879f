# Clean restarts (restart safety): ids keep increasing across them,
# the lease file always covers what was issued, and a clean shutdown leaves no
# lease span behind: the first id after a restart carries about the current time.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $node = snowflake_node('restart', 11);
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
cmp_ok($lease->{lease_ms}, '>=', time_of($max1),
	'after a clean stop the lease still covers every id issued');

$node->start;

# The first id after the restart: greater than every id before, and its time
# is about now, not a lease span (10 s) ahead of it.
my ($first, $lead_ms) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT id, (extract(epoch FROM snowflake_to_timestamp(id) - clock_timestamp()) * 1000)::int
FROM snowflake_nextval() AS id});
cmp_ok($first, '>', $max1, 'the first id after a clean restart is greater than every id before');
cmp_ok($lead_ms, '<', 2000,
	"the first id after a clean restart is not a lease span ahead of the clock (lead $lead_ms ms)");

my ($min2, $max2) = split /\|/, insert_phase(2, 20000);
cmp_ok($min2, '>', $first, 'ids after the restart keep increasing');

# pg_ctl restart, then two restarts with no id issued in between.
$node->restart;
my ($min3, $max3) = split /\|/, insert_phase(3, 1000);
cmp_ok($min3, '>', $max2, 'ids after pg_ctl restart are greater than every id before');

$node->restart;
$node->restart;
my ($min4, $max4) = split /\|/, insert_phase(4, 1000);
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
