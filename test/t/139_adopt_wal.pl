# An adoption in the WAL: snowflake_adopt_worker_id() on a fenced copy is
# logged (an ADOPT record under resource manager 173, described by
# pg_walinspect), so that no checkpoint is needed to keep it. The copy killed
# (kill -9) right after adopting, no checkpoint in between (pg_control's
# checkpoint did not move), replays a lease record that fences the worker id
# and then the adoption: restarted, it issues under the adopted worker id. A
# streaming standby of the copy, taken before the adoption, replays it and,
# promoted once the copy is stopped (failover: the same line), issues under
# it above the copy's ids. A restore of the copy that replays the adoption is a
# copy of the adopter: it refuses the worker id.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $source = snowflake_node('source', 41, '', allows_streaming => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$source->safe_psql('postgres', 'SELECT snowflake_nextval()');
$source->stop;

# a cold copy of the stopped source, archiving, no checkpoint but on demand
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init;
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $copy->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $source->data_dir, $copy->data_dir);
mkdir $copy->archive_dir;
$copy->append_conf('postgresql.conf',
	"port = " . $copy->port . "\nunix_socket_directories = '" . $copy->host . "'\n"
	  . "checkpoint_timeout = '1d'\nmax_wal_size = '4GB'\narchive_mode = on\n"
	  . "archive_command = 'cp \"%p\" \"" . $copy->archive_dir . "/%f\"'\n");
$copy->start;
copy_refused($copy, 'the copy', 41);
$copy->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');

# a base backup of the copy, before the adoption: a streaming standby and a restore
$copy->backup('before');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($copy, 'before', has_streaming => 1);
$standby->append_conf('postgresql.conf', "archive_mode = off\n");
$standby->start;

# restarted cleanly, the copy logs its lease (the fence on 41) after its
# last checkpoint, as a copy does at its first start
$copy->restart;
my ($checkpoint, $redo) = split /\|/,
  $copy->safe_psql('postgres', 'SELECT checkpoint_lsn, redo_lsn FROM pg_control_checkpoint()');
# the copy's snowflake records from $redo on, as pg_walinspect describes them
sub records
{
	return "SELECT string_agg(record_type || ' ' || description, E'\\n' ORDER BY start_lsn) "
	  . "FROM pg_get_wal_records_info('$redo', pg_current_wal_flush_lsn()) WHERE resource_manager = 'snowflake'";
}
ok($copy->poll_query_until('postgres', 'SELECT (' . records() . ") ~ '(^|\\n)LEASE [^\\n]* fenced 1 '"),
	'a lease record past the last checkpoint fences worker id 41: crash recovery replays it');

is($copy->safe_psql('postgres', 'SELECT snowflake_adopt_worker_id()'), '41', 'the copy adopts worker id 41');
my $last = $copy->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
my $adopt_end = $copy->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
like($copy->safe_psql('postgres', records()), qr/^ADOPT adopted 41; epoch_unix_ms \d+ lease_ms \d+ clock_ms \d+ worker_id 41 fenced 0 /m,
	'the adoption is in the WAL: an ADOPT record, described');

# its WAL archived for the restore, streamed to the standby
my $segment = $copy->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$copy->poll_query_until('postgres', "SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
  or die "$segment was not archived";
$copy->wait_for_catchup($standby, 'replay', $copy->lsn('flush'));

# kill -9 before any checkpoint
kill9_and_wait($copy);
my ($stdout) = run_command([ 'pg_controldata', $copy->data_dir ]);
my ($latest) = $stdout =~ /^Latest checkpoint location:\s+(\S+)$/m;
is($latest, $checkpoint, 'no checkpoint between the adoption and kill -9');
$copy->start;
# the worker id of a new id of $node, or its error
sub issues
{
	my ($node) = @_;
	my ($rc, $id, $error) = $node->psql('postgres', 'SELECT snowflake_nextval()');
	return ($rc == 0 ? $node->safe_psql('postgres', "SELECT (snowflake_decode($id)).worker_id") : $error, $id);
}
my ($worker, $after_crash) = issues($copy);
is($worker, '41', 'restarted after kill -9, crash recovery replayed the adoption: it issues under worker id 41');
cmp_ok($after_crash || 0, '>', $last, 'above its ids before the crash');
my (undef, $more) = $copy->psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 1000)');
$last = $more || $last;
$copy->wait_for_catchup($standby, 'replay', $copy->lsn('flush'));

# failover: the copy stopped, its standby promoted
$copy->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the promotion did not end';
($worker, my $promoted) = issues($standby);
is($worker, '41', 'its standby, taken before the adoption, promoted: it issues under worker id 41');
cmp_ok($promoted || 0, '>', $last, 'above every id of the copy');
$standby->stop;

# a restore of the copy's backup to the end of its archive replays the
# adoption as its source's
my $restore = PostgreSQL::Test::Cluster->new('restore');
$restore->init_from_backup($copy, 'before', has_restoring => 1, standby => 0);
$restore->append_conf('postgresql.conf', "archive_mode = off\n");
$restore->start;
$restore->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the restore did not end';
cmp_ok($restore->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() >= '$adopt_end'"), 'eq', 't',
	'the restore replayed the adoption');
copy_refused($restore, 'a restore that replays the adoption', 41);
$restore->stop;

done_testing();
