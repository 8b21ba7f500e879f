# Faults injected into a running node:
#  - crash after crash (kill -9 of the lease writer) with no id between, and
#    eight in a row with one id between, no id borrowed ahead of the clock:
#    the first id afterwards is at most lease_span ahead of the clock, with
#    max_lead = 1s and with 10min,
#    and a long statement then runs at the cap without waiting;
#  - the status right after a restart shows no invented id;
#  - a statement spanning a reload of snowflake.worker_id switches at once,
#    and the hand-over is logged with the last id under the old worker id;
#  - the lease writer comes back after SIGTERM;
#  - a lease writer that exits inside its write of the lease (gdb calls
#    proc_exit() there) does not keep the next writer out;
#  - a stopped (SIGSTOP) lease writer: a backend that needs the lease waits
#    interruptibly, and statement_timeout ends it on time;
#  - an unwritable lease file and pg_snowflake: generation refuses instead of
#    passing the lease.
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IPC::Run ();
use SnowflakeTest;

my $span_ms = 2000;    # snowflake.lease_span (the default)
my $node    = snowflake_node('faults', 61,
	"restart_after_crash = on\nautovacuum = off\nsnowflake.lease_span = ${span_ms}ms\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

sub query { return $node->safe_psql('postgres', $_[0]); }

# Waits for a lease writer other than $old to run; returns its pid.
sub wait_for_writer
{
	my ($old) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $pid = lease_writer_pid($node);
		return $pid if defined $pid && (!defined $old || $pid != $old);
		Time::HiRes::usleep(20_000);
	}
	die 'no lease writer came back';
}

# How far the id is ahead of the server's clock, in ms.
sub lead_of
{
	my ($id) = @_;
	return query(
		"SELECT (extract(epoch FROM snowflake_to_timestamp($id) - clock_timestamp()) * 1000)::int");
}

# kill -9 of the lease writer: the postmaster resets shared memory and starts
# everything again, reading the lease file.
sub crash
{
	my $log_offset = -s $node->logfile;
	my $pid        = wait_for_writer();
	kill 'KILL', $pid;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
	return wait_for_writer($pid);
}

# 1. Crash after crash with no id between.
my $before = query('SELECT max(x) FROM snowflake_nextvals(10000) x');
crash() for 1 .. 6;
my $lease = read_lease($node);
my $lease_lead = $lease->{lease_ms} + DEFAULT_EPOCH_MS - int(time * 1000);
cmp_ok($lease_lead, '<=', $span_ms + 500,
	"six crashes without ids: the lease is at most lease_span ahead ($lease_lead ms)");

# 2. The status right after the restarts, before any id: nothing invented.
is( query(
		'SELECT last_id IS NULL, lead_ms IS NULL, restart_floor = lease_until, worker_id
		 FROM snowflake_status'),
	't|t|t|61',
	'after a restart: no last id, no lead, the floor is the lease, the worker id');

my $first = query('SELECT snowflake_nextval()');
cmp_ok($first, '>', $before, 'after six crashes the first id is greater than every id before');
my $lead = lead_of($first);
cmp_ok($lead, '<=', $span_ms + 500,
	"after six crashes the first id is at most lease_span ahead ($lead ms)");
is(query('SELECT last_id FROM snowflake_status'), $first, 'snowflake_status: the last id issued');

# A long statement right after a crash runs at the cap, without waiting.
crash();
my $waits = query('SELECT waits FROM snowflake_status');
is( query(
		"SET statement_timeout = '8s';
		 SELECT count(snowflake_nextval()) FROM generate_series(1, 4200000)"),
	'4200000',
	'after a crash, 4.2M ids in one statement within statement_timeout = 8s');

# max_lead = 10min with nothing borrowed: a crash still costs at most one span.
query("ALTER SYSTEM SET snowflake.max_lead = '10min'; SELECT pg_reload_conf()");
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.max_lead') = '10min'");
# The ids of the 4.2M statement, borrowed ahead of the clock, fall behind it first.
$node->poll_query_until('postgres',
	'SELECT clock_timestamp() > snowflake_to_timestamp(last_id) FROM snowflake_status')
  or die 'the clock did not catch up';
query('SELECT count(*) FROM snowflake_nextvals(1000)');
crash();
$lead = lead_of(query('SELECT snowflake_nextval()'));
cmp_ok($lead, '<=', $span_ms + 500,
	"max_lead = 10min, nothing borrowed: after a crash the first id is at most lease_span ahead ($lead ms)");
# Eight crashes in a row with an id between each: a restart bases the next
# lease on the lease, not on the ids the floor put ahead (which would add a
# span per crash), so the bound holds on every restart.
my @leads;
for my $n (1 .. 8)
{
	crash();
	push @leads, lead_of(query('SELECT snowflake_nextval()'));
	cmp_ok($leads[-1], '<=', $span_ms + 500,
		"max_lead = 10min, crash $n of 8 in a row with one id between: the first id is at most lease_span ahead ($leads[-1] ms)");
}
note('leads after each of 8 crashes (ms): ' . join(', ', @leads));
query("ALTER SYSTEM RESET snowflake.max_lead; SELECT pg_reload_conf()");
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.max_lead') = '1s'");

# 3. A statement spanning a reload of snowflake.worker_id: it switches at once.
query(q{
CREATE TABLE seen (n serial, id bigint);
CREATE FUNCTION ids_until_worker(target int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  under_target int := 0;
  id bigint;
BEGIN
  WHILE under_target < 1000 LOOP
    id := snowflake_nextval();
    INSERT INTO seen (id) VALUES (id);
    IF (snowflake_decode(id)).worker_id = target THEN under_target := under_target + 1; END IF;
  END LOOP;
END $$;
});
my $last_before = query('SELECT last_id FROM snowflake_status');
my $session = $node->background_psql('postgres');
$session->query_safe("SET statement_timeout = '60s'");
$session->query_until(qr/started/, "\\echo started\nSELECT ids_until_worker(62);\n");
$node->poll_query_until('postgres', "SELECT last_id > $last_before + 100000 FROM snowflake_status")
  or die 'the statement issues no ids';
my $log_offset = -s $node->logfile;
query("ALTER SYSTEM SET snowflake.worker_id = 62; SELECT pg_reload_conf()");
$node->poll_query_until('postgres', 'SELECT worker_id = 62 FROM snowflake_status')
  or die 'worker id 62 not in effect';
$session->query_safe('SELECT 1');    # the statement has ended
$session->quit;
is( query(q{
SELECT count(*) FILTER (WHERE (snowflake_decode(id)).worker_id = 61) > 0,
       count(*) FILTER (WHERE (snowflake_decode(id)).worker_id = 62) >= 1000,
       count(*) FILTER (WHERE previous >= id),
       count(*) FILTER (WHERE (snowflake_decode(id)).worker_id = 61
                          AND (snowflake_decode(previous)).worker_id = 62)
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM seen) s}),
	't|t|0|0',
	'a statement spanning the reload: ids under 61, then under 62, increasing, never back');
$node->wait_for_log(qr/worker id changed from 61 to 62/, $log_offset);
my $log = slurp_file($node->logfile, $log_offset);
my ($logged_last) = $log =~ /The last id issued under worker id 61 is (\d+)\./;
is( $logged_last,
	query('SELECT max(id) FROM seen WHERE (snowflake_decode(id)).worker_id = 61'),
	'the hand-over logs the last id issued under the old worker id');
like($log, qr/Another node may take worker id 61 once its clock reads later than/,
	'the hand-over says when the old worker id may be used elsewhere');

# 4. The lease writer comes back after SIGTERM.
my $writer = wait_for_writer();
kill 'TERM', $writer;
my $new_writer = wait_for_writer($writer);
isnt($new_writer, $writer, 'the lease writer is back after SIGTERM');
cmp_ok(query('SELECT snowflake_nextval()'), '>', query('SELECT max(id) FROM seen'),
	'ids after the writer came back');

# 4b. A writer that exits while it writes the lease (proc_exit() called by
# gdb at its write_lease(), as a FATAL error would exit: no PG_FINALLY runs)
# lets the next writer in: ids go on past the lease.
SKIP:
{
	skip 'no gdb', 3 unless grep { -x "$_/gdb" } split /:/, $ENV{PATH};
	$new_writer = wait_for_writer();
	my ($gdb_out, $gdb_err) = ('', '');
	my $debugger = IPC::Run::start(
		[ 'gdb', '-nx', '-batch', '-p', $new_writer,
			'-ex', 'break snowflake::pg::write_lease',
			'-ex', 'continue',
			'-ex', 'call ((void (*)(int)) proc_exit)(1)' ],
		'<', \undef, '>', \$gdb_out, '2>', \$gdb_err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$debugger->pump until $gdb_out =~ /^Breakpoint 1 at/m || !$debugger->pumpable;
	like($gdb_out, qr/^Breakpoint 1 at/m, "gdb attached to the lease writer (pid $new_writer), a breakpoint at write_lease")
	  or diag($gdb_err);
	# ids for three lease spans: the writer is stopped at its next write and exits there
	my $count = query("SET statement_timeout = '30s'; "
		  . "SELECT count(*) FROM generate_series(1, 3000) WHERE snowflake_nextval() > 0 AND pg_sleep(0.002)::text = ''");
	$debugger->finish;
	like($gdb_out . $gdb_err, qr/exited with code 01|exited while in a function called from GDB/,
		'the lease writer exited inside its write_lease');
	is($count, 3000, 'ids went on past the lease: the writer\'s place was freed at its exit');
	$new_writer = wait_for_writer($new_writer);
}

# 5. A stopped lease writer: a backend that needs the lease waits, and
# statement_timeout ends the wait on time. The lease lapses one span after the
# last id once nobody keeps it ahead.
kill 'STOP', $new_writer;
$node->poll_query_until('postgres',
	"SELECT clock_timestamp() > lease_until + interval '100 ms' FROM snowflake_status")
  or die 'the lease did not lapse';
my ($stdout, $stderr);
my $start = time;
$node->psql(
	'postgres', "SET statement_timeout = '2s'; SELECT snowflake_nextval()",
	stdout => \$stdout, stderr => \$stderr);
my $elapsed = time - $start;
like($stderr, qr/canceling statement due to statement timeout/,
	'a stopped lease writer: statement_timeout ends the wait for the lease');
cmp_ok($elapsed, '<', 4, sprintf('... on time (%.1f s)', $elapsed));
# the stall is not silent: the waiting call and the server log name the writer
like($stderr, qr/WARNING:  snowflake: the lease writer \(pid $new_writer\) has not answered for \d+ ms/,
	'a stopped lease writer: the waiting call warns, naming it');
ok($node->log_contains(qr/the lease writer \(pid $new_writer\) has not answered/), '... in the server log too');
cmp_ok(query('SELECT writer_stalled_ms FROM snowflake_status'), '>', 2000,
	'snowflake_status: writer_stalled_ms shows how long');
kill 'CONT', $new_writer;
$node->poll_query_until('postgres', 'SELECT writer_stalled_ms IS NULL FROM snowflake_status')
  or die 'writer_stalled_ms did not clear';
cmp_ok(query("SET statement_timeout = '30s'; SELECT snowflake_nextval()"),
	'>', query('SELECT max(id) FROM seen'), 'the writer continued: ids again');

# 6. The lease file (overwritten in place) and pg_snowflake (for a new file)
# unwritable after a restart: generation refuses.
$node->restart;
my $dir = $node->data_dir . '/pg_snowflake';
chmod 0400, "$dir/lease" or die "chmod: $!";
chmod 0500, $dir or die "chmod: $!";
$node->psql(
	'postgres', "SET statement_timeout = '30s'; SELECT snowflake_nextval()",
	stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/could not extend the snowflake lease/,
	'an unwritable lease file and directory: generation refuses');
# Two clients calling for 3 s on the failing disk: each call fails, and the
# log gets a few lines a second, not a line per call.
$log_offset = -s $node->logfile;
my $script = "SELECT snowflake_nextval();\n" x 1000;
my $started = time;
my $calls = 0;
while (time < $started + 3)
{
	my @clients = map {
		IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', '-' ],
			'<', \$script, '>', \my $out, '2>', \my $err)
	} 1 .. 2;
	$_->finish for @clients;
	$calls += 2000;
}
my $seconds = time - $started;
my $failing_log = slurp_file($node->logfile, $log_offset);
my $lines = () = $failing_log =~ /^\S.*$/mg;
my $failures = () = $failing_log =~ /could not open file|could not extend the snowflake lease/g;
note(sprintf('%d calls on an unwritable disk in %.1f s: %d log lines, %d naming the failure', $calls, $seconds, $lines, $failures));
cmp_ok($lines, '<=', 10 + 8 * $seconds,
	sprintf('a failing disk under two clients: a few log lines a second (%d in %.1f s for %d failed calls)', $lines, $seconds, $calls));
like($failing_log, qr/more (failed lease writes were not logged|calls failed the same way since the last one logged)/,
	'... with a count of the failures not logged');
chmod 0700, $dir or die "chmod: $!";
chmod 0600, "$dir/lease" or die "chmod: $!";
my $after = query("SET statement_timeout = '30s'; SELECT snowflake_nextval()");
cmp_ok(time_of($after), '>', $lease->{lease_ms}, 'writable again: ids above the lease');

$node->stop;
done_testing();
