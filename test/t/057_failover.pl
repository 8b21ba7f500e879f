# Failover, measured: a primary under insert load is killed (kill -9
# of the postmaster) and its streaming standby, whose clock is 5 s behind the
# primary's (libfaketime), is promoted. Two clients log every id the primary
# returned to them (INSERT ... RETURNING, autocommit: returned = committed;
# psql line-buffered, so that no id it got is lost in its buffer at the crash).
#   - synchronous (remote_apply): no committed row is lost and every id the
#     old primary committed is below every id of the new one;
#   - asynchronous, with the walsender stopped (SIGSTOP) for 1 s before the
#     crash, so that the standby misses that second of WAL: only ids whose
#     rows the standby never received can be at or above the new primary's
#     first id. How many are is measured for lease spans of 500 ms, 2 s and
#     10 s and printed (docs/ha-and-copies.md, "Failover, standbys and
#     copies").
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use Time::HiRes;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime is not installed ($libfaketime)" unless -e $libfaketime;

my $inserts = PostgreSQL::Test::Utils::tempdir() . '/inserts.sql';
append_to_file($inserts, "INSERT INTO t DEFAULT VALUES RETURNING id;\n" x 200000);

# One failover; returns the measurements.
sub failover
{
	my ($mode, $lease_span) = @_;
	my $name = "${mode}_$lease_span";
	my $sync = $mode eq 'sync';
	my $primary = snowflake_node(
		"primary_$name", 57,
		"snowflake.lease_span = '$lease_span'\n",
		allows_streaming => 1);
	$primary->start;
	$primary->safe_psql('postgres',
		'CREATE EXTENSION snowflake; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval())');
	$primary->backup('backup');
	my $standby = PostgreSQL::Test::Cluster->new("standby_$name");
	$standby->init_from_backup($primary, 'backup', has_streaming => 1);
	{
		local $ENV{LD_PRELOAD}                   = $libfaketime;
		local $ENV{FAKETIME}                     = '-5s';
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$standby->start;
	}
	$primary->wait_for_catchup($standby);
	# Synchronous once the standby runs (a commit would wait for it before).
	$primary->safe_psql('postgres',
		"ALTER SYSTEM SET synchronous_standby_names = 'standby_$name'; "
		  . "ALTER SYSTEM SET synchronous_commit = remote_apply; SELECT pg_reload_conf()")
	  if $sync;

	# Each client writes the ids it gets to a file (a pipe would fill up).
	my @clients = map {
		my $log = PostgreSQL::Test::Utils::tempdir() . "/ids_$_";
		[ IPC::Run::start(
				[ 'stdbuf', '-oL', 'psql', '-XAtq', '-h', $primary->host, '-p', $primary->port, '-d', 'postgres', '-f', $inserts ],
				'>', $log, '2>', \my $err),
			$log ]
	} 1 .. 2;

	# Load flows and reaches the standby.
	$standby->poll_query_until('postgres', 'SELECT count(*) >= 1000 FROM t')
	  or die "$name: no load reached the standby";
	if (!$sync)
	{
		# The standby stops receiving WAL for the 1 s the measurement is about.
		my $walsender = $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
		kill 'STOP', $walsender or die "SIGSTOP $walsender: $!";
		Time::HiRes::sleep(1);
		$primary->kill9;
		kill 'KILL', $walsender;
	}
	else
	{
		$primary->kill9;
	}
	my @returned;
	for (@clients)
	{
		$_->[0]->finish;    # psql exits when the server is gone
		push @returned, grep { /^\d+$/ } split /\n/, slurp_file($_->[1]);
	}

	$standby->promote;
	my %replicated = map { $_ => 1 } split /\n/, $standby->safe_psql('postgres', 'SELECT id FROM t');
	my $max_replicated = $standby->safe_psql('postgres', 'SELECT max(id) FROM t');
	my $first = $standby->safe_psql('postgres', 'INSERT INTO t DEFAULT VALUES RETURNING id');
	cmp_ok($first, '>', $max_replicated, "$name: the new primary's ids are above every id replicated");

	my @lost = grep { !$replicated{$_} } @returned;
	my @above = grep { $_ >= $first } @returned;
	my $max_returned = (sort { $a <=> $b } @returned)[-1];
	$standby->stop;
	return {
		name     => $name,
		returned => scalar @returned,
		lost     => scalar @lost,
		above    => scalar @above,
		ahead_ms => time_of($max_returned) - time_of($first),
		lost_ref => \@lost,
		above_ref => \@above,
	};
}

my $sync = failover('sync', '2s');
cmp_ok($sync->{returned}, '>', 1000, 'sync: the clients got ids committed before the crash');
is($sync->{lost}, 0, 'sync (remote_apply): every row the clients saw committed is on the new primary');
is($sync->{above}, 0, 'sync (remote_apply): every id the old primary committed is below every id of the new one');

my @measured = ($sync);
for my $span ('500ms', '2s', '10s')
{
	my $m = failover('async', $span);
	cmp_ok($m->{lost}, '>', 0, "async $span: rows committed during the 1 s stall never reached the standby");
	my %lost = map { $_ => 1 } @{ $m->{lost_ref} };
	is(scalar(grep { !$lost{$_} } @{ $m->{above_ref} }), 0,
		"async $span: only ids whose rows the standby never received are at or above the new primary's first id");
	push @measured, $m;
}

# committed: ids the clients got; lost: of those, rows not on the new primary;
# >= new: of those, ids at or above the new primary's first id; last old id:
# its time minus the time of the new primary's first id.
diag sprintf('%-12s %9s %6s %8s %16s', 'failover', 'committed', 'lost', '>= new', 'last old id (ms)');
diag sprintf('%-12s %9d %6d %8d %+16d', @$_{qw(name returned lost above ahead_ms)}) for @measured;

done_testing();
