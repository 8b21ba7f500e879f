# Crashes under load (restart safety): after kill -9 of the postmaster
# (twice in a row) and after a backend's kill -9 makes the postmaster reset
# shared memory, every new id is greater than every id issued before: those
# committed to a table and those a client received in a transaction that never
# committed. And a crash costs a bounded jump: the first id after it is at most
# lease_span plus max_lead ahead of the clock read right before it, and at most
# lease_span when nothing was borrowed ahead of the clock before the crash.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SnowflakeTest;

my $span_ms = 2000;    # snowflake.lease_span and max_lead, the defaults (docs/reference.md)
my $max_lead_ms = 1000;
my $node = snowflake_node('crash', 21,
	"autovacuum = off\nsnowflake.lease_span = ${span_ms}ms\nsnowflake.max_lead = ${max_lead_ms}ms\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
                cycle int NOT NULL, client int NOT NULL);
});

my @connection = ('-h', $node->host, '-p', $node->port, 'postgres');

# Starts the load of one cycle: 4 pgbench clients inserting rows, and a psql
# session that prints ids it is given and never commits. Returns once the
# table holds rows of this cycle and psql has received ids.
sub start_load
{
	my ($cycle) = @_;
	my %load = (out => '', err => '', ids => '', ids_err => '');
	my $script = $node->basedir . "/030_insert_$cycle.sql";
	append_to_file($script,
		"INSERT INTO t (cycle, client) SELECT $cycle, :client_id FROM generate_series(1, 10);\n");
	$load{pgbench} = IPC::Run::start(
		[ 'pgbench', '--no-vacuum', '--client=4', '--jobs=4', '--time=120', '-f', $script,
			@connection ],
		'>', \$load{out}, '2>', \$load{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$load{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	my $ids_script = $node->basedir . "/030_ids_$cycle.sql";
	append_to_file($ids_script, "BEGIN;\n" . ("SELECT snowflake_nextval();\n" x 100000));
	$load{psql} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-f', $ids_script, @connection ],
		'<', \undef, '>', \$load{ids}, '2>', \$load{ids_err}, $load{timer});
	$node->poll_query_until('postgres', "SELECT count(*) >= 5000 FROM t WHERE cycle = $cycle")
	  or die "no rows inserted in cycle $cycle";
	my $received = 1;
	while (($load{ids} =~ tr/\n//) < 2000)
	{
		if ($load{timer}->is_expired || !$load{psql}->pumpable)
		{
			$received = 0;
			last;
		}
		$load{psql}->pump;
	}
	ok($received, "cycle $cycle: psql received ids under load");
	return \%load;
}

# Waits for the load to end (its connections are gone); returns the greatest
# id committed or received by a client.
sub finish_load
{
	my ($load, $cycle) = @_;
	$load->{pgbench}->finish;
	$load->{psql}->finish;
	my @ids = split /\n/, $load->{ids};
	like($load->{ids_err}, qr/connection|terminat/,
		"cycle $cycle: the psql session was cut off by the crash, after " . @ids . ' ids');
	my $max = 0;
	for (@ids)
	{
		die "unexpected psql output \"$_\"" unless /^\d+$/;
		$max = $_ if $_ > $max;
	}
	return $max;
}

sub max_committed
{
	my ($cycle) = @_;
	return $node->safe_psql('postgres', "SELECT max(id) FROM t WHERE cycle = $cycle");
}

# Checks that the first id after the crash is at most lease_span ahead of the
# clock, plus max_lead unless $borrowed_ms (read from snowflake_status right
# before the crash) says that no id was borrowed ahead of the clock, and in the
# first millisecond above the lease the crash left ($lease_ms) unless the clock
# is past it; that ids made now are greater than $before; and that the restart
# (the clock did not move) was not taken for the clock moving back, though ids
# continue ahead of the clock from the lease. (The +1: the first millisecond
# above the floor.)
sub check_after
{
	my ($cycle, $before, $what, $log_offset, $borrowed_ms, $lease_ms) = @_;
	my ($first, $lead_ms, $after_ms) = id_and_lead($node);
	my $mark = $lease_ms + 1 > $after_ms ? $lease_ms + 1 : $after_ms;
	cmp_ok(time_of($first), '<=', $mark,
		"$what: the first id is in the first millisecond above the lease left (or the clock's)");
	my $bound = $borrowed_ms == 0 ? $span_ms + 1 : $span_ms + $max_lead_ms + 1;
	cmp_ok($lead_ms, '<=', $bound,
		"$what: the first id is at most lease_span" . ($borrowed_ms == 0 ? '' : ' + max_lead')
		  . " ahead of the clock ($borrowed_ms ms borrowed before; lead $lead_ms ms)");
	cmp_ok($first, '>', $before, "$what: the first id after is greater than every id before");
	$node->safe_psql('postgres',
		"INSERT INTO t (cycle, client) SELECT $cycle + 100, 0 FROM generate_series(1, 1000)");
	my $min_after = $node->safe_psql('postgres',
		"SELECT min(id) FROM t WHERE cycle = $cycle + 100");
	cmp_ok($min_after, '>', $before, "$what: every id after is greater than every id before");
	is($node->safe_psql('postgres', 'SELECT clock_regressions FROM snowflake_status'),
		'0', "$what: no clock regression counted");
	is(log_count($node, qr/system clock moved back/, $log_offset),
		0, "$what: no clock regression logged");
	return;
}

# ms borrowed ahead of the clock so far, read while the load runs: the crash
# comes right after, at far fewer than 4,096 ids a millisecond.
sub borrowed { return $node->safe_psql('postgres', 'SELECT borrowed_ms FROM snowflake_status'); }

for my $cycle (1, 2)
{
	my $load = start_load($cycle);
	my $borrowed_ms = borrowed();
	kill9_and_wait($node);
	my $received = finish_load($load, $cycle);

	my $lease = read_lease($node);
	ok(defined $lease && $lease->{lease_ms} >= time_of($received),
		"cycle $cycle: after kill -9 the lease file covers every id a client received");

	my $log_offset = -s $node->logfile;
	$node->start;
	my $committed = max_committed($cycle);
	cmp_ok($committed, '>', 0, "cycle $cycle: committed rows survived the crash");
	my $before = $committed > $received ? $committed : $received;
	check_after($cycle, $before, "cycle $cycle: kill -9 of the postmaster", $log_offset, $borrowed_ms,
		$lease->{lease_ms});
}

# A backend killed: the postmaster kills every other backend and resets
# shared memory, which the extension then fills again from the lease file.
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('restart_after_crash') = 'on'");
my $load = start_load(3);
my $log_offset = -s $node->logfile;
my $victim = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity
	 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1");
my $borrowed_ms = borrowed();
kill 'KILL', $victim;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
my $received = finish_load($load, 3);
wait_for_crash_restart($node, $log_offset);
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the node did not come back after the backend crash';
my $committed = max_committed(3);
my $before = $committed > $received ? $committed : $received;
# the lease the shared memory was filled from (no id was asked for since)
check_after(3, $before, 'kill -9 of a backend', $log_offset, $borrowed_ms, read_lease($node)->{lease_ms});

# All cycles together: sorted by id, the cycles come in the order they ran.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
  SELECT CASE WHEN cycle > 100 THEN (cycle - 100) * 2 + 1 ELSE cycle * 2 END AS rank,
         lag(CASE WHEN cycle > 100 THEN (cycle - 100) * 2 + 1 ELSE cycle * 2 END)
           OVER (ORDER BY id) AS previous_rank
  FROM t) s
WHERE previous_rank > rank}),
	'0',
	'sorted by id, the rows of all cycles are in the order they were made');

$node->stop;
done_testing();
