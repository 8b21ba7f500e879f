# A disk that stops answering, injected by an LD_PRELOAD shim
# (test/t/fail_sync.c, SNOWFLAKE_STALL_SYNC): the first process to sync a file
# under pg_snowflake waits in that call until the test lets it go.
#  1. ALTER SYSTEM SET snowflake.worker_id while the lease writer is held in
#     a lease write: statement_timeout ends it, and pg_cancel_backend ends a
#     second one waiting behind it, each with its ERROR, neither
#     postgresql.auto.conf nor the lease changed; once the disk answers,
#     ALTER SYSTEM records its pending worker id again.
#  2. Two snowflake_repair_lease() at once, the first held in its sync: the
#     second waits for it, then finds nothing to repair; the damaged file is
#     kept as it was, and the lease is not below a mark a repair returned.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $tmp    = PostgreSQL::Test::Utils::tempdir;
my $shim   = "$tmp/fail_sync.so";
my $source = ($ENV{TESTDIR} // '.') . '/test/t/fail_sync.c';
system('g++', '-x', 'c', '-shared', '-fPIC', '-O1', '-o', $shim, $source, '-ldl') == 0
  or BAIL_OUT("could not build $source");
my $flag = "$tmp/stall";

# test nodes run with fsync off: the lease's fdatasync is skipped then
my $node = snowflake_node('stalled', 41, "fsync = on\n");
sub start_node
{
	local $ENV{LD_PRELOAD}           = $shim;
	local $ENV{SNOWFLAKE_STALL_SYNC} = $flag;
	$node->start;
	return;
}
start_node();
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)');
sub query { return $node->safe_psql('postgres', $_[0]); }

# The disk stops answering (the next sync under pg_snowflake waits), and
# answers again.
sub stall   { unlink "$flag.held"; append_to_file($flag, 'on'); return; }
sub unstall { unlink $flag; return; }

# The pid of the process waiting in its sync.
sub stalled_pid
{
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return $1 if -e "$flag.held" && slurp_file("$flag.held") =~ /\A(\d+)\n/;
		usleep(20_000);
	}
	die 'no process waits in a sync';
}

# psql running the commands (one -c each) in the background.
sub session
{
	my (@commands) = @_;
	my %session = (out => '', err => '');
	$session{run} = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  map { ('-c', $_) } @commands ],
		'>', \$session{out}, '2>', \$session{err}, IPC::Run::timeout(300));
	return \%session;
}

# Whether a session ended within $seconds.
sub ended_within
{
	my ($session, $seconds) = @_;
	my $deadline = time + $seconds;
	while (time < $deadline)
	{
		$session->{run}->pump_nb;
		return 1 unless $session->{run}->pumpable;
		usleep(20_000);
	}
	return 0;
}

sub finish { my ($session) = @_; $session->{run}->finish; return $session; }

# The backend of a session whose query matches $like, once it waits (in a
# condition variable or an LWLock); its pid.
sub waiting_backend
{
	my ($like) = @_;
	my $pid;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '$like' AND wait_event_type IN ('Extension', 'LWLock')"
		  . ' AND pid <> pg_backend_pid()')
	  or die "no session waits for $like";
	return query("SELECT pid FROM pg_stat_activity WHERE query LIKE '$like' AND pid <> pg_backend_pid()");
}

# 1. ALTER SYSTEM while the lease writer is held in a lease write.
my $auto_conf = $node->data_dir . '/postgresql.auto.conf';
stall();
my $ids = session("SET statement_timeout = '60s'", 'SELECT count(*) FROM generate_series(1, 1000), snowflake_nextvals(1000)');
is(stalled_pid(), lease_writer_pid($node), 'the lease writer waits in its lease write');
my $started = time;
my $timed = session("SET statement_timeout = '3s'", 'ALTER SYSTEM SET snowflake.worker_id = 42');
waiting_backend('%worker_id = 42%');
my $behind = session('ALTER SYSTEM SET snowflake.worker_id = 43');
my $behind_pid = waiting_backend('%worker_id = 43%');
query("SELECT pg_cancel_backend($behind_pid)");
ok(ended_within($behind, 20), 'pg_cancel_backend ends an ALTER SYSTEM waiting behind another');
ok(ended_within($timed, 30), sprintf('statement_timeout ends an ALTER SYSTEM waiting for the stalled lease write (%.1f s)',
	time - $started));
my $unchanged = slurp_file($auto_conf) !~ /snowflake\.worker_id/;
my $pending = read_lease($node)->{pending};
unstall();    # (on a failure above too: the sessions end then)
like(finish($behind)->{err}, qr/ERROR:  canceling statement due to user request/, 'the canceled one: its ERROR');
like(finish($timed)->{err}, qr/ERROR:  canceling statement due to statement timeout/, 'the timed out one: its ERROR');
ok($unchanged, 'postgresql.auto.conf unchanged');
is($pending, undef, 'the lease records no pending worker id');
finish($ids);
query('ALTER SYSTEM SET snowflake.worker_id = 44');
is(read_lease($node)->{pending}, '44', 'the disk answers: ALTER SYSTEM records its pending worker id');
query('ALTER SYSTEM RESET snowflake.worker_id');
is(read_lease($node)->{pending}, undef, 'and its RESET clears it');

# 2. Two repairs of a damaged lease at once, the first held in its sync.
$node->stop;
my $lease_path = $node->data_dir . '/pg_snowflake/lease';
unlink $lease_path or die "unlink: $!";
append_to_file($lease_path, "damaged\n");
start_node();
stall();
my $repair = 'SELECT (extract(epoch FROM snowflake_repair_lease(%s)) * 1000)::bigint';
my $first  = session(sprintf($repair, ''));
my $stalled = stalled_pid();
like(query("SELECT query FROM pg_stat_activity WHERE pid = $stalled"), qr/snowflake_repair_lease\(\)/,
	'the first repair waits in its sync');
my $second = session(sprintf($repair, "now() + interval '1 hour'"));
# until the second has ended, or waits for the first
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
until (ended_within($second, 0.1)
	  || query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%1 hour%' AND wait_event_type = 'Extension'"
		  . ' AND pid <> pg_backend_pid()') == 1)
{
	die 'the second repair neither ended nor waits' if time > $deadline;
}
unstall();
my @repairs = (finish($first), finish($second));
my @done    = map { $_->{out} =~ /\A(\d+)\n\z/ ? $1 : () } @repairs;
is(scalar @done, 1, 'one repair repaired');
like(join('', map { $_->{err} } @repairs), qr/ERROR:  the snowflake lease needs no repair/,
	'the other found nothing to repair');
is(slurp_file($node->data_dir . '/pg_snowflake/lease.replaced'), "damaged\n", 'the damaged file is kept as it was');
my ($returned) = sort { $b <=> $a } @done, 0;
cmp_ok(read_lease($node)->{lease_ms} + DEFAULT_EPOCH_MS, '>=', $returned,
	'the lease file is not below the mark the repair returned');
cmp_ok(query('SELECT (extract(epoch FROM lease_until) * 1000)::bigint FROM snowflake_status'), '>=', $returned,
	'nor is the lease in effect');
$node->stop;

done_testing();
