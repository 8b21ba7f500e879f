# The clone fence: the lease file records the data
# directory that wrote it (its host and inode number). A server whose lease
# was written by another directory is a copy: a base backup, a copy of a
# copy, a copy of a stopped server (cp -a), a point-in-time restore (in
# standby mode, and from a backup taken before the first id: test/t/056), a
# rewound old primary. Unless it runs as a streaming standby
# (standby.signal, no recovery target, and primary_conninfo or restore_command
# to follow its primary: its promotion is failover), it
# refuses every worker id its source used or refused (SQLSTATE 55000, with the
# reason and both ways out) until it is given its own, or until the operator
# adopts one with snowflake_adopt_worker_id(); the fence is kept in its own
# lease file, so it survives restarts and passes to copies of the copy. Each
# copy is started beside its running source, both asked for ids: none is
# issued twice.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $source = snowflake_node('source', 41, undef, allows_streaming => 1, has_archiving => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)');
$source->backup('copy');


# 1. A base backup started as a primary, beside its source.
my $c1 = PostgreSQL::Test::Cluster->new('c1');
$c1->init_from_backup($source, 'copy');
$c1->start;
copy_refused($c1, 'a base backup started as a primary', 41);
ok($c1->log_contains(qr/this data directory is a copy of another server's; ids under worker id 41 are refused/),
	'the server log says why at start');
is_deeply(read_lease($c1)->{fenced}, [41], 'its own lease file keeps the fence');
is(duplicates($source, $c1), 0, 'the base backup beside its running source: 0 ids issued by both');
$c1->restart;
copy_refused($c1, 'the copy after a restart (no backup_label any more)', 41);

# Its own worker id: generation at once, no restart; the fence stays.
set_worker_id($c1, 42);
is($c1->safe_psql('postgres', 'SELECT (snowflake_decode(snowflake_nextval())).worker_id'),
	'42', 'with a worker id of its own the copy generates');
is($c1->safe_psql('postgres', 'SELECT generating FROM snowflake_status'), 't', 'snowflake_status says so');
is(duplicates($source, $c1), 0, 'source (41) and copy (42): 0 ids issued by both');
is_deeply(read_lease($c1)->{fenced}, [41], 'the copy still refuses 41');

# 2. A copy of the copy: it refuses its source's worker id (42) and the fence
# its source's lease file carries (41).
$c1->backup('copy_of_copy');
my $c2 = PostgreSQL::Test::Cluster->new('c2');
$c2->init_from_backup($c1, 'copy_of_copy');
$c2->start;
copy_refused($c2, 'a copy of the copy', 42);
is_deeply(read_lease($c2)->{fenced}, [ 41, 42 ], 'it refuses its source\'s worker id and its source\'s fence');
is(duplicates($c1, $c2), 0, 'a copy of the copy beside its running source: 0 ids issued by both');
set_worker_id($c2, 41);
copy_refused($c2, 'the copy of the copy given the first source\'s worker id', 41);
$c2->stop;

# 3. A copy of a cleanly stopped server (PostgreSQL's file system level
# backup, cp -a), started beside its source.
$c1->stop;
my $cold = PostgreSQL::Test::Cluster->new('cold');
$cold->init;    # a node of its own (port, socket), its directory then replaced
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $cold->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $c1->data_dir, $cold->data_dir);
$cold->append_conf('postgresql.conf', "port = " . $cold->port . "\nunix_socket_directories = '" . $cold->host . "'\n");
$c1->start;
$cold->start;
copy_refused($cold, 'a copy of a stopped server', 42);
is(duplicates($c1, $cold), 0, 'the cold copy beside its running source: 0 ids issued by both');
$cold->stop;
$c1->restart;
is($c1->safe_psql('postgres', 'SELECT (snowflake_decode(snowflake_nextval())).worker_id'),
	'42', 'the source itself, restarted, is not a copy');
$c1->stop;

# 3b. The same cold copy started with standby.signal and nothing to stream
# from (neither primary_conninfo nor restore_command), promoted beside its
# source: a restore, not a standby whose promotion is failover (F14: under
# its source's worker id, the two would issue the same ids).
my $cold_standby = PostgreSQL::Test::Cluster->new('cold_standby');
$cold_standby->init;
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $cold_standby->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $c1->data_dir, $cold_standby->data_dir);
$cold_standby->append_conf('postgresql.conf',
	"port = " . $cold_standby->port . "\nunix_socket_directories = '" . $cold_standby->host . "'\n");
$cold_standby->set_standby_mode;
$c1->start;
$cold_standby->start;
is($cold_standby->safe_psql('postgres', 'SELECT not_generating FROM snowflake_status'),
	"in recovery; once promoted, worker id 42 is refused: this data directory is a copy of another server's",
	'in recovery, snowflake_status says the worker id is refused once promoted');
$cold_standby->promote;
$cold_standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the promotion did not end';
copy_refused($cold_standby, 'a cold copy started with standby.signal and nothing to stream from, promoted', 42);
ok($cold_standby->log_contains(qr/a standby with nothing to stream from/),
	'the server log says it was taken for a restore, and why');
is(duplicates($c1, $cold_standby), 0, 'promoted beside its running source: 0 ids issued by both');
$cold_standby->stop;

# 3c. The source itself started read-only with nothing to follow after a
# crash, as an HA manager starts a crashed leader when no leader is known
# (Patroni), then promoted: its lease is its own, so it is no copy and
# generates (3b's rule looks at the lease, not only at standby.signal).
kill9_and_wait($c1);
$c1->set_standby_mode;
$c1->start;
$c1->promote;
$c1->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the promotion did not end';
is($c1->safe_psql('postgres', 'SELECT (snowflake_decode(snowflake_nextval())).worker_id'),
	'42', 'the source restarted read-only with nothing to follow, promoted: it generates under its worker id');
$c1->stop;

# 4. A point-in-time restore (recovery.signal), the source gone for good:
# adopt. The archive holds the source's WAL past the backup.
my $walfile = $source->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$source->poll_query_until('postgres', "SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
my $pitr = PostgreSQL::Test::Cluster->new('pitr');
$pitr->init_from_backup($source, 'copy', has_restoring => 1, standby => 0);
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'recovery did not end';
copy_refused($pitr, 'a point-in-time restore', 41);
is(duplicates($source, $pitr), 0, 'beside its running source: 0 ids issued by both');

$pitr->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my ($stdout, $stderr);
$pitr->psql('postgres', 'SELECT snowflake_adopt_worker_id()',
	extra_params => [ '-U', 'plain' ], stderr => \$stderr);
like($stderr, qr/permission denied for function snowflake_adopt_worker_id/,
	'a role without the grant cannot adopt');
copy_refused($pitr, 'after the refused adoption', 41);

is($pitr->safe_psql('postgres', 'SELECT snowflake_adopt_worker_id()'),
	'41', 'snowflake_adopt_worker_id() returns the worker id adopted');
is_deeply(read_lease($pitr)->{fenced}, [], 'the lease file keeps no fence');
ok($pitr->log_contains('worker id 41 adopted'), 'the adoption is logged');
my $adopted = $pitr->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($pitr->safe_psql('postgres', "SELECT (snowflake_decode($adopted)).worker_id"),
	'41', 'the adopted worker id generates');
$pitr->restart;
cmp_ok($pitr->safe_psql('postgres', 'SELECT snowflake_nextval()'),
	'>', $adopted, 'and keeps generating after a restart, above the ids before');
$pitr->stop;

# 5. A streaming standby, promoted: failover needs no step, before and after
# a restart.
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($source, 'copy', has_streaming => 1);
$standby->start;
my $last = $source->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
$source->safe_psql('postgres', 'CREATE TABLE synced AS SELECT 1');    # forces a flush to the standby
$source->wait_for_catchup($standby);
$source->stop('immediate');
$standby->promote;
my $first = $standby->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($standby->safe_psql('postgres', "SELECT (snowflake_decode($first)).worker_id"),
	'41', 'a promoted standby generates under its primary\'s worker id');
cmp_ok($first, '>', $last, '... above every id its primary issued');
$standby->restart;
cmp_ok($standby->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $first,
	'... and after a restart (its lease is its own)');
is_deeply(read_lease($standby)->{fenced}, [], 'a promoted standby has no fence');

# 6. The old primary, rewound from the new one: as a standby it follows; started
# as a primary beside the new one (without standby.signal) it is a copy.
SKIP: {
	skip 'pg_rewind is not installed for this major', 6
	  unless -x $source->config_data('--bindir') . '/pg_rewind';
	my $archive = $source->archive_dir;
	$source->append_conf('postgresql.conf', "wal_log_hints = on\nrestore_command = 'cp \"$archive/%f\" \"%p\"'\n");
	$source->start;
	$source->stop;
	# pg_rewind copies the new primary's configuration files: keep the node's own
	my $conf = slurp_file($source->data_dir . '/postgresql.conf');
	command_ok([ 'pg_rewind', '--restore-target-wal', '-D', $source->data_dir,
			'--source-server', $standby->connstr('postgres') ],
		'pg_rewind of the old primary from the new one');
	open my $fh, '>', $source->data_dir . '/postgresql.conf' or die "open: $!";
	print $fh $conf;
	close $fh;
	unlink $source->data_dir . '/standby.signal';
	$source->start;
	copy_refused($source, 'a rewound old primary started as a primary', 41);
	is(duplicates($standby, $source), 0, 'beside the new primary: 0 ids issued by both');
	$source->stop;
}

done_testing();
