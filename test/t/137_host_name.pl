# A data directory that moves: started again under a new host name, as a
# container recreated (docker run, a compose service, a Deployment's new pod),
# a pod rescheduled or a disk failed over starts it. Each start runs in a UTS
# namespace of its own (unshare --uts, as an unprivileged user: --user
# --map-current-user), its kernel host name new.
#   1. Without snowflake.host_name: the first start under a new host name
#      refuses the worker id and says why (the host name changed from the one
#      the lease records, the volume, directory and birth time the same) and
#      the one fix; the lease keeps its identity and no fence, through a
#      kill -9 and another new name.
#   2. snowflake.host_name set to the name the lease records: generating again.
#   3. The container journey: five starts, each under a new kernel host name,
#      clean stops and kill -9 alike, snowflake.host_name fixed: no stall.
#   4. A block clone is told from a move only by the operator: given a worker
#      id of its own, it refuses its source's for good (the fence is kept).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

# starts a node in a UTS namespace of its own whose host name is $host
sub start_as_host
{
	my ($node, $host) = @_;
	my $ret = PostgreSQL::Test::Utils::system_log(
		'unshare', '--user', '--map-current-user', '--uts', '--keep-caps',
		'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', $host,
		'pg_ctl', '-w', '-D', $node->data_dir, '-l', $node->logfile, 'start');
	BAIL_OUT("could not start $host in a UTS namespace of its own") if $ret != 0;
	$node->_update_pid(1);
	return;
}

# a statement's error (stderr of psql, verbose)
sub error_of
{
	my ($node, $sql) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', "\\set VERBOSITY verbose\n$sql", stdout => \$stdout, stderr => \$stderr);
	return $stderr;
}

my $node = snowflake_node('ctr', 900);
start_as_host($node, 'ctr-a1');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $last = $node->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
is(read_lease($node)->{host_name}, 'ctr-a1', 'the lease records the kernel host name');
$node->stop;

# 1. a new host name, the setting empty
my $offset = -s $node->logfile;
start_as_host($node, 'ctr-b2');
my $refusal = error_of($node, 'SELECT snowflake_nextval()');
like($refusal, qr/ERROR:  55000: this server's host name changed from "ctr-a1" to "ctr-b2": ids under worker id 900 are refused/,
	'new host name: refused with SQLSTATE 55000, both names given');
like($refusal, qr/DETAIL:  The volume, the data directory and its birth time are the ones the lease file was written in/,
	'the detail says what did not change');
like($refusal, qr/HINT:  If it is a clone of the volume \(a snapshot\), set "snowflake.worker_id" to a number no other node uses\. If it is the same data directory and no copy of it runs under "ctr-a1", set "snowflake.host_name" to that name/,
	'the hint gives the fix for each: a clone its own worker id, the same directory the name the lease records');
ok($node->log_contains(qr/LOG:  snowflake: the host name changed from "ctr-a1" to "ctr-b2"; ids under worker id 900 are refused/, $offset),
	'the start-up LOG line says it');
is($node->safe_psql('postgres', 'SELECT generating, not_generating FROM snowflake_status'),
	'f|fenced: the host name changed from "ctr-a1" to "ctr-b2"; worker id 900 is refused until snowflake.host_name or snowflake.worker_id is set',
	'snowflake_status: not generating, and why (both names)');
my $lease = read_lease($node);
is_deeply([ $lease->{host_name}, $lease->{fenced} ], [ 'ctr-a1', [] ],
	'the lease keeps the name it records, and no fence: the refusal is this start\'s');
kill9_and_wait($node);
start_as_host($node, 'ctr-c3');
like(error_of($node, 'SELECT snowflake_nextval()'), qr/changed from "ctr-a1" to "ctr-c3"/,
	'after kill -9, under another new name: refused, the recorded name the same');
kill9_and_wait($node);

# 2. the fix the hint gives, the server killed before (its crash recovery
# replays the lease records the refused starts wrote: they hold no fence)
$node->append_conf('postgresql.conf', "snowflake.host_name = 'ctr-a1'\n");
start_as_host($node, 'ctr-d4');
my $next = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
cmp_ok($next, '>', $last, 'snowflake.host_name set to the recorded name: generating, above the ids before');
$last = $next;

# 3. the container journey
my @stalls;
for my $start (1 .. 5)
{
	if ($start % 2) { $node->stop; } else { kill9_and_wait($node); }
	start_as_host($node, "ctr-j$start");
	my ($id, $err) = ('', '');
	$node->psql('postgres', 'SELECT snowflake_nextval()', stdout => \$id, stderr => \$err);
	push @stalls, "ctr-j$start: $err" if $err ne '' || $id eq '' || $id <= $last;
	$last = $id if $id ne '';
}
is(scalar @stalls, 0, 'container journey: 5 starts under new host names, 0 stalls') or diag join "\n", @stalls;
is(read_lease($node)->{host_name}, 'ctr-a1', 'the lease records the name set');

# 4. a clone under another name, given a worker id of its own: the fence is kept
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.host_name = ''\nsnowflake.worker_id = 901\n");
start_as_host($node, 'clone-x');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $last,
	'a clone given a worker id of its own generates');
is_deeply(read_lease($node)->{fenced}, [900], 'its lease keeps its source\'s worker id fenced, under its own name');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.worker_id = 900\n");
start_as_host($node, 'clone-x');
like(error_of($node, 'SELECT snowflake_nextval()'), qr/55000: this server is a copy of another server and may not issue ids under its worker id 900/,
	'set back to its source\'s worker id: refused for good');
$node->stop;

done_testing();
