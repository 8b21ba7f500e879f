# A restore is a copy, whatever it holds: a base backup taken before its
# source issued its first id (no pg_snowflake/lease in it), restored from the
# WAL archive (recovery.signal and a recovery_target_time; standby.signal and
# a recovery_target_time; recovery.signal to the end of the archive), replays
# the source's lease records. They are its source's: the restored server,
# promoted and started beside its running source, refuses the source's
# worker id (the clone fence's SQLSTATE 55000) until it is given its own, and
# then issues ids none of which the source issues. A streaming standby from
# the same kind of backup, promoted, is failover: it generates at once.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use SnowflakeTest;

my $source = snowflake_node('source', 41, undef, allows_streaming => 1, has_archiving => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
wait_for_lease($source, 41);
$source->backup('before_first_id');
like(slurp_file($source->backup_dir . '/before_first_id/pg_snowflake/lease'), qr/\nworker_id 41\n/,
	'a base backup taken before the source issued an id holds its lease: written as the worker id took effect');
# 1.0 wrote the lease at the first id: such a backup of a 1.0 server holds none
unlink $source->backup_dir . '/before_first_id/pg_snowflake/lease' or die "unlink: $!";

# The source issues ids: its lease records are in the WAL, then archived.
my $last_before_target = $source->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
my $target = $source->safe_psql('postgres', 'SELECT now()');
$source->safe_psql('postgres', 'CREATE TABLE after_target AS SELECT 1');    # a commit past the target
my $walfile = $source->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$source->poll_query_until('postgres', "SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';

# A restore of the backup in one mode, started beside the running source.
sub restored
{
	my ($name, $what, $standby, $conf) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($source, 'before_first_id', has_restoring => 1, standby => $standby);
	# its timeline stays out of the source's archive, which the next restore reads
	$copy->append_conf('postgresql.conf', "archive_mode = off\n$conf");
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$what: recovery did not end";
	ok(!-e $copy->data_dir . '/recovery.signal' && !-e $copy->data_dir . '/standby.signal'
		  && !-e $copy->data_dir . '/backup_label', "$what: recovery ended (no signal file, no backup_label)");
	copy_refused($copy, $what, 41);
	ok($copy->log_contains(qr/this data directory is a copy of another server's; ids under worker id 41 are refused/),
		"$what: the server log says why");
	my ($both, $of_copy_fenced) = duplicates($source, $copy);
	is($of_copy_fenced, 0, "$what, beside its running source: 0 ids from it under worker id 41");
	is($both, 0, "$what, beside its running source: 0 ids issued by both");
	$copy->restart;
	copy_refused($copy, "$what, restarted (the signal files gone)", 41);
	is_deeply(read_lease($copy)->{fenced}, [41], "$what: its own lease file keeps the fence");
	cmp_ok(read_lease($copy)->{lease_ms}, '>=', time_of($last_before_target),
		"$what: the lease learned from the replayed WAL reaches past the source's ids");

	set_worker_id($copy, 42);
	my $first = $copy->safe_psql('postgres', 'SELECT snowflake_nextval()');
	is($copy->safe_psql('postgres', "SELECT (snowflake_decode($first)).worker_id"),
		'42', "$what: with a worker id of its own, it generates");
	my ($both_own, $of_copy) = duplicates($source, $copy);
	is($of_copy, 300000, "$what: its own worker id issues ids beside the source");
	is($both_own, 0, "$what: source (41) and restore (42): 0 ids issued by both");
	$copy->stop;
	return;
}

restored('pitr', 'recovery.signal and recovery_target_time', 0,
	"recovery_target_time = '$target'\nrecovery_target_action = 'promote'\n");
restored('pitr_standby', 'standby.signal and recovery_target_time', 1,
	"recovery_target_time = '$target'\nrecovery_target_action = 'promote'\n");
restored('archive', 'archive recovery to the end (recovery.signal)', 0, '');

# Two restores where one fence stands alone: no other rule refuses the
# worker id there. Stopped at the backup's end (recovery_target =
# 'immediate'), a restore replays none of the source's lease records: the
# worker id it was started with, its source's, is refused all the same.
# Started with no worker id, it replays them: the worker id they carry is
# refused when a reload sets it afterwards.
sub lone_fence
{
	my ($name, $what, $conf, $set_later) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($source, 'before_first_id', has_restoring => 1, standby => 0);
	$copy->append_conf('postgresql.conf', "archive_mode = off\n$conf");
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$what: recovery did not end";
	set_worker_id($copy, 41) if $set_later;
	copy_refused($copy, $what, 41);
	my ($both, $of_copy) = duplicates($source, $copy);
	is($of_copy, 0, "$what, beside its running source: 0 ids from it under worker id 41");
	$copy->stop;
	return read_lease($copy);
}

my $immediate = lone_fence('immediate', "restored to the backup's end (recovery_target = 'immediate')",
	"recovery_target = 'immediate'\nrecovery_target_action = 'promote'\n", 0);
cmp_ok($immediate->{lease_ms}, '<', time_of($last_before_target),
	"restored to the backup's end: no lease record of the source was replayed (the fence is the configured worker id's)");
lone_fence('unset', "archive recovery with no worker id, the source's set by a reload afterwards",
	"snowflake.worker_id = -1\n", 1);

# A restore from a base backup alone (backup_label, no signal file) that stops
# before the backup's end, after the startup process renamed backup_label:
# started again, it is still a restore (pg_control waits for the backup's
# end), so the lease records it replays then do not take its fence away from
# its lease file (a restore started once more keeps it). The
# backup is taken with the low-level API: the source's lease records after
# its start checkpoint are in segments held back at the first start.
my ($in, $out, $err) = ('', '', '');
my $session = IPC::Run::start([ 'psql', '-XAtq', '-d', $source->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
sub session_query
{
	my ($query) = @_;
	$out = '';
	$in .= "$query;\n\\echo END\n";
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	$session->pump_nb until $out =~ /^END\n\z/m || time > $deadline;
	$out =~ s/^END\n\z//m or die "no answer to $query: $err";
	return $out;
}
session_query(q{SELECT pg_backup_start('crashed', true)});
my $start_segment = $source->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
my $crashed = PostgreSQL::Test::Cluster->new('crashed');
$crashed->init;    # a node of its own (port, socket), its directory then replaced
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $crashed->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $source->data_dir, $crashed->data_dir);
unlink $crashed->data_dir . '/postmaster.pid';
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)');    # lease records past the start segment
$source->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $label = session_query(q{SELECT labelfile FROM pg_backup_stop(false)});
$in .= "\\q\n";
$session->finish;
$label =~ s/\n+\z/\n/;
PostgreSQL::Test::Utils::append_to_file($crashed->data_dir . '/backup_label', $label);
$crashed->append_conf('postgresql.conf',
	"port = " . $crashed->port . "\nunix_socket_directories = '" . $crashed->host . "'\narchive_mode = off\n");
my $wal = $crashed->data_dir . '/pg_wal';
unlink glob "$wal/0*";
my @held_back;
for my $segment (map { s{.*/}{}r } glob $source->data_dir . '/pg_wal/0*')
{
	PostgreSQL::Test::Utils::system_or_bail('cp', $source->data_dir . "/pg_wal/$segment", "$wal/");
	push @held_back, $segment if $segment gt $start_segment;
}
ok(scalar @held_back, 'WAL with the source\'s lease records after the backup\'s start segment');
rename "$wal/$_", "$wal/$_.held" for @held_back;
ok(!$crashed->start(fail_ok => 1), 'a restore from the base backup alone stops before the backup\'s end');
ok($crashed->log_contains(qr/WAL ends before (end of online backup|consistent recovery point)/),
	'... the WAL ending before the backup\'s end');
ok(-e $crashed->data_dir . '/backup_label.old' && !-e $crashed->data_dir . '/backup_label',
	'... after backup_label was renamed');
rename "$wal/$_.held", "$wal/$_" for @held_back;
my $offset = -s $crashed->logfile;
# (PostgreSQL does not finish a restarted backup recovery without the WAL
# archive: it may stop again at the backup's end)
$crashed->stop if $crashed->start(fail_ok => 1);
ok($crashed->log_contains(qr/redo starts at/, $offset), 'started again, it replays the WAL from the backup\'s start');
is(log_count($crashed, qr/this data directory is a copy of another server's; ids under worker id 41 are refused/, $offset),
	1, '... still a restore (pg_control waits for the backup\'s end): the fence is logged');
is_deeply(read_lease($crashed)->{fenced}, [41], '... and the source\'s lease records it replays keep the fence in its lease file');

# A streaming standby from a backup of the same kind, promoted: failover, it
# generates at once, under its primary's worker id, above every id its
# primary issued.
my $fresh = snowflake_node('fresh', 43, undef, allows_streaming => 1);
$fresh->start;
$fresh->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$fresh->backup('before_first_id');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($fresh, 'before_first_id', has_streaming => 1);
$standby->start;
my $last = $fresh->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
$fresh->safe_psql('postgres', 'CREATE TABLE synced AS SELECT 1');    # forces a flush to the standby
$fresh->wait_for_catchup($standby);
$fresh->stop('immediate');
$standby->promote;
my $first = $standby->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($standby->safe_psql('postgres', "SELECT (snowflake_decode($first)).worker_id"),
	'43', 'a promoted streaming standby from a backup taken before the first id generates at once');
cmp_ok($first, '>', $last, '... above every id its primary issued');
is(log_count($standby, qr/is a copy of another server's/), 0, '... and was never taken for a copy');
$standby->stop;

$source->stop;
done_testing();
