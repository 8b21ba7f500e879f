# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   1. settings: snowflake.registry with snowflake.worker_id, or a bad conninfo, refuse to start
#   2. claims: a clean shutdown and a crash restart get the same worker id
#      back, kill -9 of the postmaster another one; ids exhausted is a clear error; a dead node's id released by hand
#   3. the registry stopped (SIGSTOP) for less than the window: no error, the
#      insert path never waits on it
#   4. the registry down past the window's end: errors start at the end, not
#      before, and stop within a renewal after it returns
#   5. a holder stopped (SIGSTOP) past its window while another node is
#      granted its worker id, then resumed: no id at or past its window's end
#   6. clocks skewed (libfaketime): claims beyond snowflake.registry_max_skew refused
#   7. 200 claimants racing for 10 free worker ids: each granted once
#   8. failover: a standby claims its own worker id in recovery; promoted while
#      the registry is down, it generates at once, above its old primary's ids
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $registry = registry_server('registry');

# A node's table of ids, and try_insert(): one id into it, or the error into errs.
my $schema = q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE errs (at timestamptz NOT NULL DEFAULT clock_timestamp(), sqlstate text, message text, detail text);
CREATE FUNCTION try_insert() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    INSERT INTO ids (id) VALUES (snowflake_nextval());
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    INSERT INTO errs (sqlstate, message, detail) VALUES (SQLSTATE, SQLERRM, detail);
END $$;
};
my $script = PostgreSQL::Test::Utils::tempdir() . '/try_insert.sql';
append_to_file($script, "SELECT try_insert();\n");

# pgbench calling try_insert() at `rate` a second for `seconds`, in the background.
sub start_load
{
	my ($node, $seconds, $rate, @options) = @_;
	my ($out, $err) = ('', '');
	my $run = IPC::Run::start(
		[ 'pgbench', '-n', '-f', $script, '-T', $seconds, '-R', $rate, '-c', '2', @options,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	return { run => $run, out => \$out, err => \$err };
}

sub status { return $_[0]->safe_psql('postgres', "SELECT $_[1] FROM snowflake_status"); }

# ---------------------------------------------------------------------------
# 1. settings
{
	my $both = snowflake_node('both', 3, "snowflake.registry = 'host=/nonexistent dbname=x'\n");
	ok(!$both->start(fail_ok => 1), 'snowflake.worker_id and snowflake.registry both set: the server does not start');
	ok($both->log_contains(qr/parameters "snowflake\.worker_id" and "snowflake\.registry" are both set/),
		'the log says why');
	my $bad = snowflake_node('bad', undef, "snowflake.registry = 'host=x = y'\n");
	ok(!$bad->start(fail_ok => 1), 'a snowflake.registry that is no conninfo: the server does not start');
	ok($bad->log_contains(qr/invalid value for parameter "snowflake\.registry"/), 'the log says why');
	# the conninfo's own options reach the registry's session (the node adds
	# synchronous_commit after them): read-only transactions, so no claim
	my $conninfo = registry_create($registry, 'options', '[0,4)', '1 hour');
	my $with_options = registry_node('with_options', "$conninfo options=''-c default_transaction_read_only=on''");
	$with_options->start;
	$with_options->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	ok($with_options->poll_query_until('postgres', "SELECT registry_error LIKE '%read-only transaction%' FROM snowflake_status"),
		'options in snowflake.registry reach the registry\'s session (its claims are read-only)');
	$with_options->stop;
}

# ---------------------------------------------------------------------------
# 2. claims, shutdown and kill -9, exhaustion, a release by hand
{
	my $conninfo = registry_create($registry, 'small', '[0,2)', '1 hour');
	my $node = registry_node('k', $conninfo, "restart_after_crash = on\n");
	$node->start;
	$node->safe_psql('postgres', $schema);
	my $first = wait_for_worker($node);
	is($first, 0, 'a new node gets the worker id free the longest (never used: the lowest)');
	like($registry->safe_psql('small', "SELECT state || ' ' || holder_name FROM snowflake_registry.claims WHERE worker_id = $first"),
		qr/^held \S+:\d+ \Q${\ $node->data_dir}\E$/, 'the registry shows it held by the node (host:port data directory)');
	my $max = $node->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
	is(($max >> 12) & 1023, $first, 'ids carry the granted worker id');
	is($registry->safe_psql('small', "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'snowflake registry worker'"),
		1, 'the registry\'s pg_stat_activity names the holder\'s connection');

	$node->stop;
	ok(!$node->log_contains(qr/snowflake registry worker.*exited with exit code/),
		'a clean shutdown: the registry worker exits with 0 (not logged as a failure)');
	ok($node->log_contains(qr/snowflake: worker id $first released to the registry/), 'a clean shutdown releases it');
	is($registry->safe_psql('small', "SELECT state FROM snowflake_registry.claims WHERE worker_id = $first"),
		'free', 'the registry shows it free');
	$node->start;
	is(wait_for_worker($node), $first, 'restarted after a clean shutdown: the same worker id back');
	cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $max, 'ids go on above the ones before');

	# the registry worker terminated by another process (pg_terminate_backend
	# would): it exits with 1 and PostgreSQL starts it again, the grant kept
	my $terminated = background_worker_pid($node, qr/snowflake registry worker/);
	kill 'TERM', $terminated or die 'no registry worker to terminate';
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my $again;
	usleep(100_000) until (($again = background_worker_pid($node, qr/snowflake registry worker/)) && $again != $terminated) || time > $deadline;
	ok($again && $again != $terminated, 'the registry worker terminated by another process is started again');
	is(wait_for_worker($node), $first, 'with the same worker id');

	# a crash of one server process: the postmaster reinitializes, keeps its
	# incarnation, and the registry grants the same worker id again
	my $registry_worker = background_worker_pid($node, qr/snowflake registry worker/);
	my $log_offset = -s $node->logfile;
	$max = $node->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
	kill 'KILL', $registry_worker or die 'no registry worker to kill';
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
	is(wait_for_worker($node), $first, 'after kill -9 of a server process (the crash restart): the same worker id, the same grant');
	cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $max, 'ids go on above the ones before');

	$max = $node->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
	kill9_and_wait($node);
	$node->start;
	my $restarted = time;
	my $after_kill = wait_for_worker($node);
	my $claimed_in = time - $restarted;
	cmp_ok($claimed_in, '<=', 5, sprintf('after kill -9 and a restart, ids again within one claim (%.2f s; bound: the 5 s call time-out)', $claimed_in));
	isnt($after_kill, $first, "after kill -9: another worker id ($after_kill), the old one being held until its window and quarantine end");
	cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $max, 'ids go on above the ones before');

	# both worker ids held: a third node gets none, and says why
	my $third = registry_node('e', $conninfo);
	$third->start;
	$third->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$third->poll_query_until('postgres', "SELECT registry_error LIKE 'no worker id is free%' FROM snowflake_status")
	  or die 'no exhaustion reported';
	my ($stdout, $stderr);
	$third->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()", stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/ERROR:  55000: snowflake has no worker id\nDETAIL:  The registry has not granted a worker id to this server\./,
		'worker ids exhausted: generation refused with SQLSTATE 55000');
	like($stderr, qr/DETAIL:  The registry has not granted a worker id to this server\. The registry "[^"]*dbname=small[^"]*" was last reached at .*; since then: no worker id is free in the snowflake registry/,
		'the detail names the registry, when it was reached, and that no worker id is free');

	# the operator releases the killed incarnation's worker id: the third node
	# gets it, its ids starting after the last window granted for it
	my $old_until = $registry->safe_psql('small', "SELECT high_water_ms FROM snowflake_registry.workers WHERE worker_id = $first");
	is($registry->safe_psql('small', "SELECT snowflake_registry_release($first)"), 't', 'snowflake_registry_release(worker_id) frees it');
	# its next window starts one grace (7 s) after the last one's end (R6):
	# snowflake_status says so while the node waits for it
	ok($third->poll_query_until('postgres',
			"SELECT registry_error LIKE 'worker id $first is granted for ids from %ms ahead of this server''s clock%' FROM snowflake_status"),
		'while the window granted is ahead of the clock, registry_error says from when');
	is(wait_for_worker($third), $first, 'the third node is granted it');
	my ($id, $lead) = split /\|/, $third->safe_psql('postgres',
		'SELECT id, round(extract(epoch FROM snowflake_to_timestamp(id) - clock_timestamp()) * 1000) FROM snowflake_nextval() id');
	cmp_ok(DEFAULT_EPOCH_MS + time_of($id), '>=', $old_until + 7000,
		'its first id is at or after the end of the window granted before, plus one grace (released by hand)');
	cmp_ok($lead, '<=', 1000, "and dated $lead ms ahead of its clock: not more than snowflake.max_lead (the window's start waited for)");
	# the log says so when the window started more than max_lead ahead when
	# granted (a loaded machine may grant it later, when it no longer does)
	my $ahead = $registry->safe_psql('small',
		"SELECT from_ms - granted_ms FROM snowflake_registry.grants WHERE worker_id = $first ORDER BY fencing_epoch DESC LIMIT 1");
	if ($ahead > 1500)
	{
		ok($third->log_contains(qr/Its window starts \d+ ms ahead of this server's clock/),
			"the log says the window starts ahead (granted $ahead ms before its start)");
	}
	elsif ($ahead < 500)
	{
		ok(!$third->log_contains(qr/Its window starts \d+ ms ahead/), "granted $ahead ms before its start: the log says no wait");
	}
	else
	{
		pass("granted $ahead ms before its start, within the server's delay around max_lead: the log may say either");
	}
	$third->stop;
	$node->stop;
}

# ---------------------------------------------------------------------------
# 3 and 4. the registry unreachable: for less than the window, then past it
my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min');
my $node = registry_node('a', $conninfo);
$node->start;
$node->safe_psql('postgres', $schema);
wait_for_worker($node);

# Latencies (ms) of a pgbench run's transactions, from its per-transaction log.
sub latencies
{
	my ($prefix) = @_;
	my @ms;
	for my $file (glob "$prefix.*")
	{
		for (split /\n/, slurp_file($file))
		{
			my @f = split / /;
			push @ms, $f[2] / 1000;
		}
	}
	return sort { $a <=> $b } @ms;
}

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

# ---------------------------------------------------------------------------
# 4b. the window's edge, the registry stopped: from 800 ms before the end, ids
# as fast as one backend makes them (borrowing up to snowflake.max_lead ahead
# of the clock) until refused; the last is in the time unit just before the end
{
	my $edge = registry_node('edge', $conninfo);
	$edge->start;
	$edge->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	wait_for_worker($edge);
	signal_node($registry, 'STOP');
	$edge->poll_query_until('postgres', "SELECT registry_error IS NOT NULL FROM snowflake_status")
	  or die 'the registry outage was not noticed';
	my $until = status($edge, 'window_until');
	my $node = $edge;
	# the window's edge: from 800 ms before it, ids as fast as one backend
	# makes them (borrowing up to snowflake.max_lead ahead of the clock) until
	# refused; the last is in the time unit just before the end
	$node->poll_query_until('postgres', "SELECT clock_timestamp() > '$until'::timestamptz - interval '800 ms'")
	  or die 'the window does not near its end';
	$node->safe_psql('postgres', sprintf(q{
		CREATE TABLE edge (id bigint);
		DO $$
		DECLARE
		    last bigint;
		BEGIN
		    LOOP
		        BEGIN
		            SELECT max(x) INTO last FROM snowflake_nextvals(4096) x;
		            INSERT INTO edge VALUES (last);
		        EXCEPTION WHEN object_not_in_prerequisite_state THEN
		            -- refused: at the window's end, or for a while (the lease
		            -- writer behind on a loaded machine) before it
		            EXIT WHEN clock_timestamp() >= '%s'::timestamptz;
		        END;
		    END LOOP;
		END $$}, $until));
	my $until_ms = $node->safe_psql('postgres', "SELECT round(extract(epoch FROM '$until'::timestamptz) * 1000)");
	my $last = $node->safe_psql('postgres', 'SELECT max(id) FROM edge');
	my $last_ms = DEFAULT_EPOCH_MS + time_of($last);
	cmp_ok($last_ms, '<=', $until_ms - 1, 'ids up to the window\'s edge: none at or past its end');
	# the last in the millisecond before the end, unless the backend was
	# descheduled across it (a loaded machine): within 50 ms of it
	cmp_ok($last_ms, '>=', $until_ms - 50,
		sprintf('ids up to the window\'s edge: the last %d ms before its end', $until_ms - $last_ms));
	signal_node($registry, 'CONT');
	$edge->stop;
}

# ---------------------------------------------------------------------------
# 5. a holder stopped past its window while another node is granted its worker id
{
	my $one = registry_create($registry, 'one', '[0,1)', '1 s');
	my $holder = registry_node('p', $one);
	$holder->start;
	$holder->safe_psql('postgres', $schema);
	wait_for_worker($holder);
	my $load = start_load($holder, 60, 100);
	$holder->poll_query_until('postgres', 'SELECT count(*) > 10 FROM ids') or die 'no load';
	signal_node($holder, 'STOP');
	my $until_ms;
	$registry->poll_query_until('one', 'SELECT clock_timestamp() > to_timestamp((expires_ms + 1500) / 1000.0) FROM snowflake_registry.workers')
	  or die 'the window did not end';
	$until_ms = $registry->safe_psql('one', 'SELECT expires_ms FROM snowflake_registry.workers');
	my $other = registry_node('q', $one);
	$other->start;
	$other->safe_psql('postgres', $schema);
	is(wait_for_worker($other), 0, 'with the holder stopped past its window and the quarantine, another node is granted its worker id');
	$other->safe_psql('postgres', 'INSERT INTO ids (id) SELECT snowflake_nextvals(2000)');
	signal_node($holder, 'CONT');
	$holder->poll_query_until('postgres', "SELECT registry_error LIKE 'no worker id is free%' FROM snowflake_status")
	  or die 'the resumed holder did not find its grant lost';
	$holder->poll_query_until('postgres', "SELECT count(*) >= 10 FROM errs") or die 'the resumed holder issued no error';
	$load->{run}->kill_kill;
	ok($holder->log_contains(qr/the registry no longer grants worker id 0 to this server; claiming another/),
		'the resumed holder logs that its grant is gone');
	my $held = $holder->safe_psql('postgres', "SELECT count(*), max(id) FROM ids");
	my ($held_count) = split /\|/, $held;
	is($holder->safe_psql('postgres', "SELECT count(*) FROM ids WHERE extract(epoch FROM snowflake_to_timestamp(id)) * 1000 >= $until_ms"),
		0, "resumed: 0 ids at or past its window's end ($held_count ids before it)");
	is($other->safe_psql('postgres', "SELECT count(*) FROM ids WHERE extract(epoch FROM snowflake_to_timestamp(id)) * 1000 < $until_ms"),
		0, "the other node's ids are all at or past that end");
	my %seen;
	my $duplicates = 0;
	for my $n ($holder, $other)
	{
		$seen{$_}++ and $duplicates++ for split /\n/, $n->safe_psql('postgres', 'SELECT id FROM ids');
	}
	is($duplicates, 0, sprintf('0 duplicates in the union of both nodes\' %d ids', scalar keys %seen));
	$holder->stop;
	$other->stop;
}

# ---------------------------------------------------------------------------
# 6. clock skew: claims beyond snowflake.registry_max_skew (2 s here) refused
my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
SKIP:
{
	skip "libfaketime is not installed ($libfaketime)", 6 unless -e $libfaketime;
	my %skewed;
	for my $case ([ 'half', '+1' ], [ 'twice', '+4' ], [ 'ten_min', '+600' ])
	{
		my ($name, $offset) = @$case;    # seconds ahead
		my $n = registry_node("skew_$name", $conninfo, "snowflake.registry_max_skew = '2s'\n");
		local $ENV{LD_PRELOAD}                   = $libfaketime;
		local $ENV{FAKETIME}                     = $offset;
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$n->start;
		$skewed{$name} = $n;
	}
	my $half = $skewed{half};
	$half->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	my $worker = wait_for_worker($half);
	ok(defined $worker, "a clock 1 s ahead (half the bound): worker id $worker claimed");
	for my $name ('twice', 'ten_min')
	{
		my $n = $skewed{$name};
		$n->safe_psql('postgres', 'CREATE EXTENSION snowflake');
		$n->poll_query_until('postgres', "SELECT registry_error LIKE 'the registry''s clock is % ms behind this server''s%' FROM snowflake_status")
		  or die "$name: no skew reported";
		my $ahead = $name eq 'twice' ? '4 s (twice the bound)' : '10 min';
		is(status($n, 'worker_id'), '', "a clock $ahead ahead: no worker id claimed");
		my ($out, $err);
		$n->psql('postgres', 'SELECT snowflake_nextval()', stdout => \$out, stderr => \$err);
		like($err, qr/snowflake has no worker id.*more than snowflake\.registry_max_skew \(2000 ms\)/s,
			"a clock $ahead ahead: generation refused, saying why");
	}
	# the skewed node and an unskewed one: ids of both, none shared
	my $plain = registry_node('plain', $conninfo);
	$plain->start;
	$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	wait_for_worker($plain);
	my %seen;
	my $duplicates = 0;
	for my $n ($half, $plain)
	{
		$seen{$_}++ and $duplicates++ for split /\n/, $n->safe_psql('postgres', 'SELECT snowflake_nextvals(5000)');
	}
	is($duplicates, 0, 'a node 1 s ahead and one on time: 0 duplicates in 10,000 ids');
	ok(!$skewed{twice}->log_contains(qr/claimed from the registry/), 'the node twice the bound ahead claimed nothing');
	$_->stop for values %skewed, $plain;
}

# ---------------------------------------------------------------------------
# 7. 200 claimants racing for 10 free worker ids
{
	registry_create($registry, 'race', '[0,10)', '10 min');
	my $claim = PostgreSQL::Test::Utils::tempdir() . '/claim.sql';
	append_to_file($claim, "SELECT * FROM snowflake_registry_claim('holder-' || :client_id, 'racer ' || :client_id, NULL, 1023, 60000, "
		  . DEFAULT_EPOCH_MS . ", 'time=41 worker=10 sequence=12');\n");
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-f', $claim, '-c', '200', '-j', '2', '-t', '1',
		'-h', $registry->host, '-p', $registry->port, 'race' ], '>', \$out, '2>', \$err);
	my $refused = () = $err =~ /no worker id is free in the snowflake registry/g;
	is($refused, 190, '190 of the 200 claims refused: no worker id free');
	is($registry->safe_psql('race', 'SELECT count(*), count(DISTINCT worker_id), count(DISTINCT holder_name) FROM snowflake_registry.grants'),
		'10|10|10', '10 grants, each of another worker id to another claimant');
	is($registry->safe_psql('race', "SELECT count(*), count(DISTINCT holder) FROM snowflake_registry.workers WHERE holder IS NOT NULL"),
		'10|10', 'each worker id held once');
}

# ---------------------------------------------------------------------------
# 8. failover: a standby claims its own worker id; promoted with the registry down, it generates at once
{
	my $primary = registry_node('primary', $conninfo, undef, allows_streaming => 1);
	$primary->start;
	$primary->safe_psql('postgres', $schema);
	my $primary_worker = wait_for_worker($primary);
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	my $standby_worker = wait_for_worker($standby);
	isnt($standby_worker, $primary_worker, "the standby holds a worker id of its own ($standby_worker; the primary's: $primary_worker) while in recovery");
	is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'still a standby');
	$primary->safe_psql('postgres', 'INSERT INTO ids (id) SELECT snowflake_nextvals(5000)');
	my $max = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
	$primary->wait_for_catchup($standby);
	$registry->stop('fast');
	$primary->stop('immediate');
	$standby->promote;
	my $id = $standby->safe_psql('postgres', 'INSERT INTO ids (id) VALUES (snowflake_nextval()) RETURNING id');
	cmp_ok($id, '>', $max, 'promoted with the registry down: an id at once, above every id of its old primary');
	is(($id >> 12) & 1023, $standby_worker, 'under its own worker id');
	$registry->start;
	$standby->stop;
}

$registry->stop;
done_testing();
