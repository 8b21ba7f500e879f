# The system clock set back, with libfaketime preloaded into the
# server. Its offset is read from a file on every clock read, so the test can
# move the server's clock while it runs:
#  - a restart with the clock an hour back: ids continue above every id made
#    before, and 10000 of them come without waiting;
#  - with snowflake.max_lead = 0 and the clock behind, generation waits for the
#    clock, interruptibly: statement_timeout and pg_cancel_backend() end it;
#  - the clock moved back 10 min while running: no smaller id, no waiting, one
#    LOG line and one count per event.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowflakeTest;

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime is not installed ($libfaketime)" unless -e $libfaketime;

my $node = snowflake_node('clock', 31);
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), phase int NOT NULL);
INSERT INTO t (phase) SELECT 1 FROM generate_series(1, 10000);
});
my $max1 = $node->safe_psql('postgres', 'SELECT max(id) FROM t');
$node->stop;

# The server's clock offset, as libfaketime reads it; replaced atomically so
# that no clock read sees a half-written file.
my $clock_file = $node->basedir . '/faketime';
sub set_clock
{
	my ($offset) = @_;
	append_to_file("$clock_file.tmp", "$offset\n");
	rename("$clock_file.tmp", $clock_file) or die "rename: $!";
	return;
}

# How far the server's clock is behind the real one, in seconds.
sub server_behind
{
	my $server = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	return time - $server;
}

sub status
{
	my ($column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM snowflake_status");
}

set_clock('-1h');
{
	local $ENV{LD_PRELOAD}                   = $libfaketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE}      = $clock_file;
	local $ENV{FAKETIME_NO_CACHE}            = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	delete local $ENV{FAKETIME};
	$node->start;
}
my $log_offset_restart = -s $node->logfile;
my $behind = server_behind();
ok($behind > 3500 && $behind < 3700,
	sprintf('the restarted server\'s clock is an hour behind (%.0f s)', $behind));

# Restart with the clock set back.
my $first = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
cmp_ok($first, '>', $max1, 'clock an hour back: the first id is greater than every id before');
$node->safe_psql('postgres', q{
SET statement_timeout = '30s';
INSERT INTO t (phase) SELECT 2 FROM generate_series(1, 10000);
});
my ($min2, $max2) = split /\|/,
  $node->safe_psql('postgres', 'SELECT min(id), max(id) FROM t WHERE phase = 2');
cmp_ok($min2, '>', $first, 'clock an hour back: 10000 ids more, all greater than before');
is(status('waits'), '0', 'clock an hour back: the 10000 ids came without waiting');
is(status('clock_regressions'), '1',
	'clock an hour back across the restart: counted as one regression (the lease keeps the last reading)');
is(log_count($node, qr/system clock moved back/, $log_offset_restart),
	1, 'clock an hour back across the restart: logged once');

# max_lead = 0 and the clock an hour behind the last id: generation waits.
$node->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.max_lead = 0; SELECT pg_reload_conf()');
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.max_lead') = '0'")
  or die 'snowflake.max_lead = 0 not in effect';

my $waits = status('waits');
my ($stdout, $stderr);
my $start = time;
my $ret = $node->psql(
	'postgres', q{
SET statement_timeout = '300ms';
SELECT count(*) FROM snowflake_nextvals(100000);
}, stdout => \$stdout, stderr => \$stderr);
my $elapsed = time - $start;
isnt($ret, 0, 'max_lead = 0, clock behind: snowflake_nextvals(100000) does not complete');
like($stderr, qr/canceling statement due to statement timeout/,
	'max_lead = 0, clock behind: statement_timeout ends the wait for the clock');
cmp_ok($elapsed, '<', 10, sprintf('... promptly (%.1f s)', $elapsed));
cmp_ok(status('waits'), '>', $waits, 'snowflake_status counts the wait');

# pg_cancel_backend() ends the wait too.
my $session = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_until(qr/waiting/, "\\echo waiting\nSELECT snowflake_nextval();\n");
$node->poll_query_until('postgres',
	"SELECT wait_event_type = 'Extension' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the session does not wait for the clock';
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$session->query('SELECT 1');
like($session->{stderr}, qr/canceling statement due to user request/,
	'max_lead = 0, clock behind: pg_cancel_backend() ends the wait for the clock');
$session->quit;

# The clock catches up: ids carry the current time again.
set_clock('+0');
$behind = server_behind();
ok(abs($behind) < 60, sprintf('the server\'s clock is set right (%.1f s)', $behind));
my $lead = $node->safe_psql('postgres', q{
SELECT (extract(epoch FROM snowflake_to_timestamp(snowflake_nextval()) - clock_timestamp())
        * 1000)::int});
cmp_ok($lead, '<', 1000, "once the clock caught up, ids carry the current time (lead $lead ms)");

# max_lead = 0 with the clock right: past 4096 ids in a millisecond, calls wait
# for the clock (briefly), and no id is ahead of it.
$waits = status('waits');
is( $node->safe_psql(
		'postgres', q{
SET statement_timeout = '30s';
SELECT count(*), snowflake_to_timestamp(max(x)) <= clock_timestamp()
FROM snowflake_nextvals(100000) AS x}),
	'100000|t',
	'max_lead = 0: 100000 ids, none ahead of the clock');
cmp_ok(status('waits'), '>', $waits, 'max_lead = 0: the calls that waited are counted');

$node->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.max_lead; SELECT pg_reload_conf()');
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.max_lead') = '1s'")
  or die 'snowflake.max_lead not reset';


# The clock moves back 10 minutes while the server runs, twice.
for my $event (1, 2)
{
	my $regressions = status('clock_regressions');
	my $log_offset  = -s $node->logfile;
	$waits = status('waits');
	my $max = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
	set_clock('-10m');
	$behind = server_behind();
	ok($behind > 590 && $behind < 700,
		sprintf('event %d: the server\'s clock moved back (%.1f s)', $event, $behind));

	my $phase = 2 + $event;
	$node->safe_psql('postgres', "SET statement_timeout = '30s'; "
		  . "INSERT INTO t (phase) SELECT $phase FROM generate_series(1, 10000)")
	  for 1 .. 3;
	my ($min, $max_event, $count) = split /\|/,
	  $node->safe_psql('postgres', "SELECT min(id), max(id), count(*) FROM t WHERE phase = $phase");
	cmp_ok($min, '>', $max, "event $event: every id made after the clock moved back is greater than the last before");
	is($count, '30000', "event $event: 30000 ids");
	# 30000 ids count on through the sequence of the last millisecond and the
	# next few (4096 a millisecond): their time does not follow the clock.
	my $spread = time_of($max_event) - time_of($max);
	cmp_ok($spread, '<=', 10,
		"event $event: the ids keep the last time, counting on ($spread ms)");
	is(status('waits'), $waits, "event $event: no call waited for the clock");
	is(status('clock_regressions'), $regressions + 1, "event $event: counted once");
	is(log_count($node, qr/system clock moved back/, $log_offset),
		1, "event $event: logged once");

	# The clock catches up; the next call ends the event.
	set_clock('+0');
	$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
}

is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT phase, lag(phase) OVER (ORDER BY id) AS previous FROM t) s
WHERE previous > phase}),
	'0',
	'sorted by id, the rows are in the order they were inserted');

$node->stop;
done_testing();
