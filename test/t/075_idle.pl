# An idle node (SPEC §3, issue 7): the lease writer stops writing one lease
# span after the last id, and its WAL records, marked unimportant, do not make
# an idle node's timed checkpoint happen.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $node = snowflake_node('idle', 71,
	"autovacuum = off\ncheckpoint_timeout = '30s'\nsnowflake.lease_span = '2s'\n");
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
	my $count = () = $stdout =~ /rmgr: (?:snowflake|custom128)\b/g;
	return $count;
}

# Timed checkpoints so far, skipped ones included (in pg_stat_checkpointer from 17 on).
my $timed_checkpoints = query("SELECT to_regclass('pg_stat_checkpointer') IS NULL") eq 't'
  ? 'SELECT checkpoints_timed FROM pg_stat_bgwriter'
  : 'SELECT num_timed FROM pg_stat_checkpointer';

query('CHECKPOINT');
my $checkpoint = query('SELECT checkpoint_lsn FROM pg_control_checkpoint()');
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

# The next timed checkpoint finds nothing important since the last one: skipped.
$node->poll_query_until('postgres', "SELECT ($timed_checkpoints) > $timed", 't')
  or die 'no timed checkpoint came';
is(query('SELECT checkpoint_lsn FROM pg_control_checkpoint()'), $checkpoint,
	'the timed checkpoint of the idle node was skipped despite the lease records');

$node->stop;
done_testing();
