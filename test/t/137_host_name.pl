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
#   5. A lease written by 1.0 (no host name recorded) under a new host name:
#      refused as a move by its inode; snowflake.host_name set to the old name
#      lifts it.
#   6. A registry node under new host names gets its released worker id back
#      when snowflake.host_name names it (without: a new holder each time).
#   7. Failover after a move: the promoted standby, which replayed the records
#      of the primary's refused start, generates.
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
like($refusal, qr/ERROR:  55000: this server's host name changed from "ctr-a1" to "ctr-b2" \(this host's name\)\nDETAIL:  Ids under worker id 900 are refused/,
	'new host name: refused with SQLSTATE 55000, both names given');
like($refusal, qr/DETAIL:  Ids under worker id 900 are refused until this server is told which server it is\. The volume, the data directory and its birth time are the ones the lease file was written in/,
	'the detail says what did not change');
like($refusal, qr/HINT:  If it is a clone of the volume \(a snapshot\), set "snowflake.worker_id" to a number no other node uses\. If it is the same data directory, and no other server issues ids under worker id 900 \(under "ctr-a1" or any other name: the server it was copied from may have been renamed since\), either set "snowflake.host_name" to that name in postgresql.conf and restart, or keep the name it runs under and run SELECT snowflake_adopt_worker_id\(\), which records it/,
	'the hint gives the fix for each: a clone its own worker id, the same directory the name the lease records or an adoption');
ok($node->log_contains(qr/LOG:  snowflake: the host name changed from "ctr-a1" to "ctr-b2" \(this host's name\); ids under worker id 900 are refused/, $offset),
	'the start-up LOG line says it');
is($node->safe_psql('postgres', 'SELECT generating, not_generating FROM snowflake_status'),
	'f|fenced: the host name changed from "ctr-a1" to "ctr-b2" (this host\'s name); worker id 900 is refused until snowflake.host_name names "ctr-a1" again, snowflake_adopt_worker_id() is run, or snowflake.worker_id gives this server a worker id of its own',
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
$offset = -s $node->logfile;
start_as_host($node, 'clone-x');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $last,
	'a clone given a worker id of its own generates');
ok($node->log_contains(qr/LOG:  snowflake: the host name changed from "ctr-a1" to "clone-x" \(this host's name\); ids under worker id 900, which its lease names, are refused, and this server uses worker id 901/, $offset)
	  && !$node->log_contains(qr/snowflake\.host_name" to that name/, $offset),
	'its start says its source\'s worker id is refused, and gives no advice to take its source\'s name');
is_deeply(read_lease($node)->{fenced}, [900], 'its lease keeps its source\'s worker id fenced, under its own name');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.worker_id = 900\n");
start_as_host($node, 'clone-x');
like(error_of($node, 'SELECT snowflake_nextval()'), qr/55000: this server is a copy of another server and may not issue ids under its worker id 900/,
	'set back to its source\'s worker id: refused for good');
$node->stop;

# 5. A lease written by 1.0 (version 5: no host name recorded, its host the
# host name's hash alone) under a new host name: a move by its inode, the
# refusal saying the name is not recorded; snowflake.host_name set to the old
# kernel name lifts it.
my $old = snowflake_node('v10', 902);
start_as_host($old, 'v10-a');
$old->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $before = $old->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
$old->stop;
write_lease_as_1_0($old);
is(read_lease($old)->{version}, 5, 'the lease rewritten as 1.0 writes it');
start_as_host($old, 'v10-b');
like(error_of($old, 'SELECT snowflake_nextval()'),
	qr/55000: this server's host name changed from a name its lease file does not record \(written by 1\.0\) to "v10-b" \(this host's name\)\n/,
	'a 1.0 lease under a new host name: refused as a move, the old name not recorded');
kill9_and_wait($old);
$old->append_conf('postgresql.conf', "snowflake.host_name = 'v10-a'\n");
start_as_host($old, 'v10-c');
cmp_ok($old->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $before,
	'snowflake.host_name set to the old kernel name: generating, above the ids before');
is(read_lease($old)->{host_name}, 'v10-a', 'the lease is now written as 1.1 writes it, the name recorded');
$old->stop;

# 6. A registry node in a new container: named by snowflake.host_name in its
# holder name, it gets its released worker id back; named by the kernel's
# host name, it is another holder at every start.
my $registry = registry_server('reg');
my $conninfo = registry_create($registry, 'fleet', '[0,8)', '1 hour');
my $mover = registry_node('mover', $conninfo, "snowflake.host_name = 'orders-1'\n");
start_as_host($mover, 'ctr-r1');
$mover->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $granted = wait_for_worker($mover);
like($registry->safe_psql('fleet', "SELECT holder_name FROM snowflake_registry.claims WHERE worker_id = $granted"),
	qr/^orders-1:\d+ /, 'the registry names the holder by snowflake.host_name');
$mover->stop;
start_as_host($mover, 'ctr-r2');
is(wait_for_worker($mover), $granted, 'a registry node under a new host name, the setting fixed: its worker id back');
$mover->stop;
my $drifter = registry_node('drifter', $conninfo);
start_as_host($drifter, 'ctr-s1');
$drifter->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $first_grant = wait_for_worker($drifter);
$drifter->stop;
start_as_host($drifter, 'ctr-s2');
isnt(wait_for_worker($drifter), $first_grant, 'without the setting, a new kernel host name is a new holder: another worker id');
$drifter->stop;

# 7. Failover after a move: the primary started once under a new host name
# (refused at that start), its standby replaying the lease records of that
# start, then promoted with the primary stopped: it generates, above the
# primary's ids (the records hold no fence of the move).
my $primary = snowflake_node('ha', 903, undef, allows_streaming => 1);
start_as_host($primary, 'ha-a');
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$primary->backup('ha_backup');
my $standby = PostgreSQL::Test::Cluster->new('ha_standby');
$standby->init_from_backup($primary, 'ha_backup', has_streaming => 1);
$standby->start;
my $primary_last = $primary->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
$primary->stop;
start_as_host($primary, 'ha-b');
like(error_of($primary, 'SELECT snowflake_nextval()'), qr/changed from "ha-a" to "ha-b"/,
	'the primary under a new host name: refused at that start');
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the promotion did not end';
cmp_ok($standby->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $primary_last,
	'failover after a move: the promoted standby generates, above the primary\'s ids');
$standby->stop;

# 8. A rename is not a move (F13R). snowflake.host_name given in the files of
# a server that runs under the name its lease records (its kernel's host name
# here): at its clean shutdown the lease and the fence's copy are stamped with
# the new name; restarted, on this host or in a new container, it keeps
# issuing. A snapshot taken while it runs holds the old name: started under
# the new one elsewhere, it is a move. Given on a stopped server, or before a
# kill -9, it is a move too: refused, both names said; the ways out: the
# recorded name (then a rename while it runs), or an adoption.
my $dock = snowflake_node('dock', 904);
start_as_host($dock, 'dockA');
$dock->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $dock_last = $dock->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'orders-db'\n");
$dock->reload;
cmp_ok($dock->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $dock_last, 'a name given in the files of a running server: it issues on');
is(read_lease($dock)->{host_name}, 'dockA', 'until its shutdown, its lease keeps the name it runs under');
$offset = -s $dock->logfile;
$dock->stop;
ok($dock->log_contains(qr/LOG:  snowflake: the settings' files name this server "orders-db": a rename; its lease records the new name for its next start/, $offset),
	'its clean shutdown says it is a rename');
is_deeply([ read_lease($dock)->{host_name}, read_lease($dock, 'fence')->{host_name} ], [ 'orders-db', 'orders-db' ],
	"the lease and the fence's copy record the new name");
start_as_host($dock, 'dockA');
my $renamed = $dock->safe_psql('postgres', 'SELECT snowflake_nextval()');
cmp_ok($renamed, '>', $dock_last, 'started on the same host under the new name: generating');
kill9_and_wait($dock);
start_as_host($dock, 'ctr-k1');
$dock_last = $dock->safe_psql('postgres', 'SELECT snowflake_nextval()');
cmp_ok($dock_last, '>', $renamed, 'killed, started in a new container under the name kept: generating');
# a rename given and withdrawn before the shutdown
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'orders-db-2'\n");
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'orders-db'\n");
$offset = -s $dock->logfile;
$dock->stop;
ok(!$dock->log_contains(qr/a rename/, $offset) && read_lease($dock)->{host_name} eq 'orders-db',
	'withdrawn before the shutdown: no rename, the lease keeps the name');
# given before a kill -9: not recorded, the start under the new name is a move
start_as_host($dock, 'ctr-k2');
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'billing-db'\n");
kill9_and_wait($dock);
start_as_host($dock, 'ctr-k2');
$refusal = error_of($dock, 'SELECT snowflake_nextval()');
like($refusal, qr/ERROR:  55000: this server's host name changed from "orders-db" to "billing-db" \(snowflake.host_name, on a host named "ctr-k2"\)\n/,
	'a name given before a kill -9: refused as a move, the name set and the host\'s said');
like($dock->safe_psql('postgres', 'SELECT not_generating FROM snowflake_status'),
	qr/^fenced: the host name changed from "orders-db" to "billing-db" \(snowflake.host_name, on a host named "ctr-k2"\); worker id 904 is refused until snowflake.host_name names "orders-db" again, snowflake_adopt_worker_id\(\) is run, or snowflake.worker_id gives this server a worker id of its own$/,
	'snowflake_status says the name set and the three ways out');
$dock->stop;
# the way out: the recorded name, then the name to keep given while it runs (row 2 of issue 57)
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'orders-db'\n");
start_as_host($dock, 'ctr-k3');
$dock_last = $dock->safe_psql('postgres', 'SELECT snowflake_nextval()');
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'billing-db'\n");
$dock->stop;
start_as_host($dock, 'ctr-k4');
cmp_ok($dock->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $dock_last,
	'run under the recorded name, renamed while it ran, started in a new container: generating');
$dock->stop;
# or an adoption, which records the name it runs under
$dock->append_conf('postgresql.conf', "snowflake.host_name = 'ledger-db'\n");
start_as_host($dock, 'ctr-k5');
like(error_of($dock, 'SELECT snowflake_nextval()'), qr/changed from "billing-db" to "ledger-db"/, 'set while stopped: refused');
$dock->safe_psql('postgres', 'SELECT snowflake_adopt_worker_id()');
cmp_ok($dock->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $dock_last, 'adopted: generating');
is(read_lease($dock)->{host_name}, 'ledger-db', 'the lease records the name it runs under');
$dock->stop;
# a name given on the command line is not the files': their change is no rename
my $cli = snowflake_node('cli', 905);
$cli->append_conf('postgresql.conf', "snowflake.host_name = 'files-name'\n");
my $ret = PostgreSQL::Test::Utils::system_log('unshare', '--user', '--map-current-user', '--uts', '--keep-caps',
	'sh', '-c', 'hostname cliA && exec "$@"', 'sh', 'pg_ctl', '-w', '-D', $cli->data_dir, '-l', $cli->logfile,
	'-o', '-c snowflake.host_name=cli-name', 'start');
BAIL_OUT('could not start cliA') if $ret != 0;
$cli->_update_pid(1);
$cli->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$cli->safe_psql('postgres', 'SELECT snowflake_nextval()');
$cli->append_conf('postgresql.conf', "snowflake.host_name = 'files-name-2'\n");
$cli->stop;
is(read_lease($cli)->{host_name}, 'cli-name', 'a name from the command line: a change of the files is no rename');

done_testing();

# CRC-32C (Castagnoli, reflected), as the lease file's checksum line
sub crc32c
{
	my ($crc) = (0xFFFFFFFF);
	for my $byte (unpack 'C*', $_[0])
	{
		$crc ^= $byte;
		$crc = ($crc >> 1) ^ (($crc & 1) ? 0x82F63B78 : 0) for 1 .. 8;
	}
	return $crc ^ 0xFFFFFFFF;
}

# rewrites a stopped node's lease file as 1.0 wrote it: version 5, no
# host_name line, the directory's host the host name's hash alone
sub write_lease_as_1_0
{
	my ($node) = @_;
	my $lease = read_lease($node);
	my $host = $lease->{directory_host} & 0xFFFFFFFF;
	my $text = $lease->{text};
	$text =~ s/\Asnowflake lease 6\n/snowflake lease 5\n/ or die 'not a version 6 lease';
	$text =~ s/^directory \d+ /directory $host /m;
	$text =~ s/^host_name [^\n]*\n//m;
	$text =~ s/^crc32c [0-9a-f]{8}\n\z//m or die 'no checksum line';
	$text .= sprintf("crc32c %08x\n", crc32c($text));
	my $path = $node->data_dir . '/pg_snowflake/lease';
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text . ("\0" x (512 - length $text));
	close $fh or die "$path: $!";
	return;
}
