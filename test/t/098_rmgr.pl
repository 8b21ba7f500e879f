# The WAL resource manager: snowflake logs its lease under id 173, its own on
# the PostgreSQL wiki's list, and still replays 1.0's records, logged under
# RM_EXPERIMENTAL_ID (128): a standby of the new library follows a 1.0 primary
# (standbys first, as docs/upgrading.md says) and, promoted, issues ids above
# all of the primary's. Another library on 128 stops the server in either
# order (it would take 1.0's records for its own and drop them), until
# snowflake.replay_1_0_wal = off says no such WAL is to be replayed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

# a library that takes id 128, built against this server's headers
my $tmp     = PostgreSQL::Test::Utils::tempdir;
my $library = "$tmp/rmgr_squatter.so";
my $source  = ($ENV{TESTDIR} // '.') . '/test/t/rmgr_squatter.c';
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $include = `$pg_config --includedir-server`;
chomp $include;
system('gcc', '-shared', '-fPIC', '-O1', "-I$include", '-o', $library, $source) == 0
  or BAIL_OUT("could not build $source");

# The records of custom resource managers in a node's WAL from $from (an LSN)
# to its flush position, by id, as pg_waldump names them (snowflake is the
# only one here that writes).
sub lsn { return $_[0]->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()'); }
sub records_by_rmgr
{
	my ($node, $from) = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', lsn($node) ],
		'>', \$stdout, '2>', \$stderr)
	  or die "pg_waldump: $stderr";
	my %count;
	$count{$1}++ while $stdout =~ /rmgr: (custom\d+)\s/g;
	return \%count;
}

my $node = snowflake_node('rmgr', 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'snowflake, $library'\n");
my $offset = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'another library on id 128 listed after snowflake: the server does not start');
like(slurp_file($node->logfile, $offset),
	qr/"squatter"[^\n]*\b128\b[^\n]*\n[^\n]*"snowflake 1\.0"/,
	"PostgreSQL's error names snowflake's resource manager for 1.0's records");

$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'$library, snowflake'");
$offset = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'listed first: the server does not start either (1.0\'s records would go to it)');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/snowflake cannot register the resource manager of its version 1\.0's WAL/, 'snowflake says why');
like($log, qr/DETAIL:  Version 1\.0 logged its lease under RM_EXPERIMENTAL_ID \(128\), the id PostgreSQL lends to extensions in development, which "squatter" holds; later versions log it under id 173\./,
	'the detail names the library and both ids');
like($log, qr/HINT:  Once no server replays WAL written before the upgrade from 1\.0 .* set "snowflake\.replay_1_0_wal" to off\./,
	'the hint names the setting that lets both load');

$node->append_conf('postgresql.conf', "snowflake.replay_1_0_wal = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $from = lsn($node);
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', 0,
	'snowflake.replay_1_0_wal = off: both load, and snowflake generates');
my $records = records_by_rmgr($node, $from);
ok($records->{custom173} && !$records->{custom128}, 'its lease records are under id 173 (pg_waldump: '
	  . join(', ', map { "$_ $records->{$_}" } sort keys %$records) . ')');
$node->stop;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'snowflake, $library'");
ok($node->start(fail_ok => 1), 'off, in either order');
$node->stop;

# --- 1.0's WAL replayed: a 1.0 primary, a standby of this library.
my ($install, $release, $skip) = release_1_0_install();
SKIP:
{
	skip $skip, 6 if defined $skip;
	my $primary = snowflake_node('primary_1_0', 7, '',
		allows_streaming => 1, install_path => $install);
	$primary->start;
	$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new('standby_new');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	$primary->safe_psql('postgres', 'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval())');
	my $lease_before = read_lease($standby);
	my $primary_from = lsn($primary);
	$primary->safe_psql('postgres', 'INSERT INTO t SELECT FROM generate_series(1, 20000)');
	my $primary_records = records_by_rmgr($primary, $primary_from);
	cmp_ok($primary_records->{custom128} // 0, '>', 0, "release 1.0 ($release) logs its lease under id 128 ("
		  . ($primary_records->{custom128} // 0) . ' records)');
	$primary->wait_for_catchup($standby);
	my $max = $primary->safe_psql('postgres', 'SELECT max(id) FROM t');
	my $lease = read_lease($standby);
	cmp_ok($lease->{lease_ms}, '>=', time_of($max),
		"the standby of the new library replays them: its lease covers the primary's last id"
		  . ($lease_before ? " (it was $lease_before->{lease_ms})" : ''));
	$primary->stop('immediate');
	$standby->promote;
	my $first = $standby->safe_psql('postgres', 'SELECT snowflake_nextval()');
	cmp_ok($first, '>', $max, 'promoted, its first id is above every id of the 1.0 primary');
	my $standby_log = slurp_file($standby->logfile);
	unlike($standby_log, qr/PANIC|resource manager .* does not exist|invalid resource manager/,
		'no record left unreplayed');
	$standby->safe_psql('postgres', 'INSERT INTO t SELECT FROM generate_series(1, 5000)');
	is($standby->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM t'), 't', 'every id once');
	$standby->stop;
}

done_testing();
