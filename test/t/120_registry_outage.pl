# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   3. the registry stopped (SIGSTOP) for less than the window: no error, the
#      insert path never waits on it
#   4. the registry down past the window's end: errors start at the end, not
#      before, and stop within a renewal after it returns
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

my $registry = registry_server('registry');

# ---------------------------------------------------------------------------
# 3 and 4. the registry unreachable: for less than the window, then past it
my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min');
my $node = registry_node('a', $conninfo);
$node->start;
$node->safe_psql('postgres', TRY_INSERT_SCHEMA);
wait_for_worker($node);

{
	my $logs = PostgreSQL::Test::Utils::tempdir();
	my $base = start_load($node, 3, 200, '--log', "--log-prefix=$logs/base");
	$base->{run}->finish;
	my @base = latencies("$logs/base");

	my $load = start_load($node, 5, 200, '--log', "--log-prefix=$logs/outage");
	usleep(1_000_000);    # a second of load before the fault
	my $stopped = signal_node($registry, 'STOP');
	$node->poll_query_until('postgres', "SELECT registry_error IS NOT NULL FROM snowflake_status")
	  or die 'the registry outage was not noticed';
	usleep(2_500_000);    # the outage: 3 s in all, half the window
	signal_node($registry, 'CONT');
	$load->{run}->finish;
	my @outage = latencies("$logs/outage");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM errs'), 0,
		"the registry stopped (SIGSTOP, $stopped processes) for 3 s, under a 6 s window: no error");
	my $rows = scalar @outage;
	my ($base_avg, $outage_avg) = map { my @l = @$_; my $s = 0; $s += $_ for @l; $s / @l } \@base, \@outage;
	note sprintf('insert latency, registry up: avg %.2f ms, max %.2f ms (%d inserts); registry stopped: avg %.2f ms, max %.2f ms (%d inserts)',
		$base_avg, $base[-1], scalar @base, $outage_avg, $outage[-1], $rows);
	cmp_ok($outage[-1], '<', 1000,
		'no insert waited on the registry (each call to it waits up to 1 s for an answer)');
	$node->poll_query_until('postgres', "SELECT registry_error IS NULL FROM snowflake_status")
	  or die 'the registry did not answer again';
}

{
	$node->safe_psql('postgres', 'TRUNCATE ids, errs');
	my $load = start_load($node, 30, 100);
	$node->poll_query_until('postgres', 'SELECT count(*) > 10 FROM ids') or die 'no load';
	$registry->stop('fast');
	$node->poll_query_until('postgres', "SELECT registry_error IS NOT NULL FROM snowflake_status")
	  or die 'the registry outage was not noticed';
	my $until = status($node, 'window_until');
	$node->poll_query_until('postgres', "SELECT clock_timestamp() > '$until'::timestamptz + interval '1.5 s'")
	  or die 'the window did not end';
	ok($node->log_contains(qr/WARNING:  snowflake: the window of worker id \d+ ends in \d+ ms/),
		'a warning in the log while less than half the window was left');
	my $down = $node->safe_psql('postgres', 'SELECT clock_timestamp()');    # the registry still down
	$registry->start;
	my $up = $registry->safe_psql('postgres', 'SELECT clock_timestamp()');
	$node->poll_query_until('postgres', "SELECT count(*) > 0 FROM ids WHERE at > '$up'") or die 'ids did not resume';
	my $resumed = $node->safe_psql('postgres', "SELECT min(at) FROM ids WHERE at > '$up'");
	$load->{run}->kill_kill;

	my ($first_error, $errors, $last_ok_before) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT min(at), count(*), (SELECT max(at) FROM ids WHERE at < (SELECT min(at) FROM errs)) FROM errs});
	cmp_ok($errors, '>', 0, "errors while the window was over ($errors)");
	my $ms = sub { $node->safe_psql('postgres', "SELECT round(extract(epoch FROM '$_[0]'::timestamptz - '$_[1]'::timestamptz) * 1000)") };
	my ($error_vs_until, $ok_vs_until, $resume_after) = ($ms->($first_error, $until), $ms->($last_ok_before, $until), $ms->($resumed, $up));
	note "window end $until; last id before it ${ok_vs_until} ms from it, first error ${error_vs_until} ms from it; the registry back at $up, ids again ${resume_after} ms later";
	cmp_ok($error_vs_until, '>=', 0, 'errors start at the window\'s end, not before');
	cmp_ok($ok_vs_until, '>', -250, 'ids were issued until the window\'s end (at 100 a second)');
	# its start is a new life, and a window that ended is never reinstated (R5): a claim after the grace
	cmp_ok($resume_after, '<=', 7000 + 1500,
		'ids again within the grace (7 s) and a renewal after the registry is back, its window having ended');
	ok($node->log_contains(qr/the window presented ended at/), 'the ended window was not reinstated');
	is($node->safe_psql('postgres', qq{SELECT count(*) FROM ids WHERE snowflake_to_timestamp(id) >= '$until' AND at < '$down'}),
		0, 'no id at or past the window\'s end before the registry renewed it');
	is($node->safe_psql('postgres', 'SELECT DISTINCT sqlstate FROM errs'), '55000', 'the errors have SQLSTATE 55000');
	like($node->safe_psql('postgres', 'SELECT message || \' / \' || detail FROM errs LIMIT 1'),
		qr/^the registry's window for snowflake worker id \d+ ended at .* \/ The registry "[^"]*dbname=fleet[^"]*" was last reached at .*; since then: /,
		'the error names the window\'s end, the registry and when it answered last');
	$node->stop;
}

$registry->stop;
done_testing();
