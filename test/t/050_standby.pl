# Hot standby: a streaming standby shares its primary's worker id,
# so it refuses to generate (SQLSTATE 25006) but decodes; once promoted it
# generates, above every id it replicated, also those the primary made ahead
# of the standby's clock: the primary's lease reaches the standby in the WAL.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $primary = snowflake_node('primary', 41, undef, allows_streaming => 1);
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), phase int NOT NULL);
INSERT INTO t (phase) SELECT 1 FROM generate_series(1, 5000);
CREATE TABLE legacy (id serial PRIMARY KEY);
CREATE TABLE legacy_refs (legacy_id integer REFERENCES legacy);
});

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

# Ids the primary makes after the backup reach the standby by WAL only.
$primary->safe_psql('postgres', 'INSERT INTO t (phase) SELECT 2 FROM generate_series(1, 5000)');
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT count(*) FROM t'), '10000',
	'the standby has every row');

# Generation is refused, with SQLSTATE 25006 and a hint.
for my $call ('snowflake_nextval()', 'snowflake_nextvals(10)')
{
	my ($stdout, $stderr);
	$standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT $call",
		stdout => \$stdout, stderr => \$stderr);
	like($stderr,
		qr/ERROR:  25006: snowflake ids cannot be generated on a hot standby/,
		"$call on the standby: refused with SQLSTATE 25006");
	like($stderr, qr/HINT:  .*primary/, "$call on the standby: the hint names the primary");
}
is($standby->safe_psql('postgres', 'SELECT generating, not_generating FROM snowflake_status'),
	'f|in recovery: a standby issues no ids until it is promoted', 'snowflake_status on the standby: not generating, and why');

# Decoding works on the standby.
is( $standby->safe_psql(
		'postgres', q{
SELECT count(*) FROM t
WHERE (snowflake_decode(id)).worker_id = 41
  AND snowflake_to_timestamp(id) BETWEEN now() - interval '10 min' AND now() + interval '10 s'}),
	'10000',
	'decoding works on the standby');

# A conversion is planned on the standby (the dry run makes no temporary
# table, which a standby cannot); the conversion itself is refused there.
is($standby->safe_psql('postgres',
		q{SELECT string_agg(table_name || ' ' || action, ', ' ORDER BY step, table_name::text)
		    FROM snowflake_convert_column('legacy', 'id', dry_run => true) WHERE step <= 3}),
	'legacy drop default, legacy widen, legacy_refs widen',
	'a dry run of snowflake_convert_column works on the standby');
my ($convert_rc, $convert_out, $convert_err) =
  $standby->psql('postgres', q{SELECT count(*) FROM snowflake_convert_column('legacy', 'id')});
like($convert_err, qr/ERROR:  cannot execute LOCK TABLE during recovery/,
	'the conversion itself is refused on the standby');

my $max_replicated = $standby->safe_psql('postgres', 'SELECT max(id) FROM t');

# The primary's clock runs ahead of the standby's (skew, or ids borrowed up to
# max_lead ahead of it) before it goes away: the last row replicated carries
# a time past the lease in the base backup and ahead of the standby's clock.
# libfaketime preloaded into the primary sets its clock an hour ahead.
my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
my $max_ahead;
if (-e $libfaketime)
{
	my $clock_file = $primary->basedir . '/faketime';
	append_to_file($clock_file, "+0\n");
	{
		local $ENV{LD_PRELOAD}                   = $libfaketime;
		local $ENV{FAKETIME_TIMESTAMP_FILE}      = $clock_file;
		local $ENV{FAKETIME_NO_CACHE}            = '1';
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		delete local $ENV{FAKETIME};
		$primary->restart;
	}
	append_to_file("$clock_file.tmp", "+1h\n");
	rename("$clock_file.tmp", $clock_file) or die "rename: $!";
	$primary->safe_psql('postgres', 'INSERT INTO t (phase) VALUES (3)');
	$primary->wait_for_catchup($standby);
	$max_ahead = $standby->safe_psql('postgres', 'SELECT max(id) FROM t WHERE phase = 3');
}

# The standby's lease file follows the primary's lease records: once it has
# replayed past the primary's latest extension, its lease is at least as far.
my $primary_lease = $primary->safe_psql('postgres',
	"SELECT (extract(epoch FROM lease_until) * 1000)::bigint - @{[DEFAULT_EPOCH_MS]} FROM snowflake_status");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
cmp_ok(read_lease($standby)->{lease_ms}, '>=', $primary_lease,
	'after catch-up the standby\'s lease file reaches the primary\'s lease');

# Promotion: the old primary goes away, the standby takes over.
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';

$standby->safe_psql('postgres', 'INSERT INTO t (phase) SELECT 4 FROM generate_series(1, 5000)');
my $min_after = $standby->safe_psql('postgres', 'SELECT min(id) FROM t WHERE phase = 4');
cmp_ok($min_after, '>', $max_replicated,
	'after promotion, every id is greater than every id replicated before');
SKIP:
{
	skip "libfaketime is not installed ($libfaketime)", 2 unless defined $max_ahead;
	cmp_ok($min_after, '>', $max_ahead,
		'after promotion, ids are greater than those the primary made ahead of its clock');
	is($standby->safe_psql('postgres', 'SELECT clock_regressions FROM snowflake_status'), '1',
		'after promotion, a clock behind the primary\'s is counted as one regression');
}
is( $standby->safe_psql(
		'postgres', 'SELECT count(*) FROM t WHERE (snowflake_decode(id)).worker_id <> 41'),
	'0', 'after promotion, ids carry the worker id');
is($standby->safe_psql('postgres', 'SELECT generating FROM snowflake_status'),
	't', 'snowflake_status after promotion: generating');
my $lease = read_lease($standby);
my $max = $standby->safe_psql('postgres', 'SELECT max(id) FROM t WHERE phase = 4');
ok(defined $lease && $lease->{lease_ms} >= time_of($max),
	'after promotion, the lease file covers the ids issued');

$standby->stop;
done_testing();
