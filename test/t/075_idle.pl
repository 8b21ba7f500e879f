# An idle node: the lease writer stops writing one lease
# span after the last id, and its WAL records, marked unimportant, do not make
# an idle node's timed checkpoint happen: after the reference checkpoint the
# WAL holds only lease records (pg_waldump), and the next two timed
# checkpoints are skipped (no "checkpoint starting: time" in the log; the
# second is waited for so that the first has finished: while a checkpoint
# runs, pg_control still names the one before, whatever the running one does).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $node = snowflake_node('idle', 71,
	"autovacuum = off\ncheckpoint_timeout = '30s'\nlog_checkpoints = on\nsnowflake.lease_span = '2s'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');

sub query { return $node->safe_psql('postgres', $_[0]); }

# Lease records in the WAL between two flushed positions (pg_waldump names a
# custom resource manager it has not loaded by its id).
sub lease_records
{
	my ($from, $to) = @_;
	return 0 if $from eq $to;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ],
		'>', \$stdout, '2>', \$stderr)
	  or die "pg_waldump: $stderr";
	my $count = () = $stdout =~ /rmgr: (?:snowflake|custom173)\b/g;
	return $count;
}

# Timed checkpoints so far, skipped ones included (in pg_stat_checkpointer from 17 on).
my $timed_checkpoints = query("SELECT to_regclass('pg_stat_checkpointer') IS NULL") eq 't'
  ? 'SELECT checkpoints_timed FROM pg_stat_bgwriter'
  : 'SELECT num_timed FROM pg_stat_checkpointer';

# Nothing left for the queries below to prune, then the reference checkpoint.
query('VACUUM');
query('CHECKPOINT');
my $checkpoint = query('SELECT checkpoint_lsn FROM pg_control_checkpoint()');
my $log_offset = -s $node->logfile;
my $timed = query($timed_checkpoints);
my $start = query('SELECT pg_current_wal_flush_lsn()');

# One id, then the tail: the writer keeps the lease ahead for one span.
query('SELECT snowflake_nextval()');
$node->poll_query_until('postgres',
	"SELECT clock_timestamp() > snowflake_to_timestamp(last_id) + interval '3.5 s' FROM snowflake_status")
  or die 'the tail did not pass';
my ($tail_end, $extensions) =
  split /\|/, query('SELECT pg_current_wal_flush_lsn(), lease_extensions FROM snowflake_status');
cmp_ok(lease_records($start, $tail_end), '>', 0,
	'in the tail after the last id, the lease writer wrote lease records');

# Past the tail: no write for a while.
query('SELECT pg_sleep(0)');
$node->poll_query_until('postgres',
	"SELECT clock_timestamp() > snowflake_to_timestamp(last_id) + interval '7 s' FROM snowflake_status")
  or die 'time did not pass';
my ($idle_end, $extensions_after) =
  split /\|/, query('SELECT pg_current_wal_flush_lsn(), lease_extensions FROM snowflake_status');
is($extensions_after, $extensions, 'an idle node extends its lease no more');
is(lease_records($tail_end, $idle_end), 0, 'an idle node writes no lease record past the tail');

# The WAL since the reference checkpoint: lease records, and nothing else
# (no record a timed checkpoint would count as activity).
my $wal_end = query('SELECT pg_current_wal_flush_lsn()');
my ($stdout, $stderr);
IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $checkpoint, '-e', $wal_end ],
	'>', \$stdout, '2>', \$stderr)
  or die "pg_waldump: $stderr";
my @records = split /\n/, $stdout;
shift @records if @records && $records[0] =~ /CHECKPOINT_ONLINE/;    # the reference checkpoint itself
my @others = grep { !/rmgr: (?:snowflake|custom173)\b/ } @records;
is(scalar @others, 0, 'after the reference checkpoint the WAL holds only lease records')
  or diag(join "\n", @others);

# The next two timed checkpoints find nothing important since the reference
# one: both skipped. The second is waited for, so the first has finished.
$node->poll_query_until('postgres', "SELECT ($timed_checkpoints) >= $timed + 2", 't')
  or die 'no timed checkpoints came';
ok(!$node->log_contains(qr/checkpoint starting: time/, $log_offset),
	'no timed checkpoint of the idle node started despite the lease records');
is(query('SELECT checkpoint_lsn FROM pg_control_checkpoint()'), $checkpoint,
	'the last checkpoint is still the reference one');

$node->stop;
done_testing();
