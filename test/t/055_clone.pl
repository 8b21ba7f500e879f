# The clone fence (SPEC §3, issue 11): a data directory restored from a base
# backup or for point-in-time recovery and started as a primary is a copy of
# a node that may still be issuing ids under the same worker id. It refuses
# that worker id (SQLSTATE 55000, with what happened and what to do) until it
# is given its own, or until the operator adopts it with
# snowflake_adopt_worker_id(); the refusal survives restarts. A streaming
# standby that is promoted is failover: it generates without any step.
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

# Generation refused, with SQLSTATE 55000, the reason and both ways out.
sub refused
{
	my ($node, $what) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()",
		stdout => \$stdout, stderr => \$stderr);
	like($stderr,
		qr/ERROR:  55000: this server is a restored copy of another server and may not issue ids under its worker id 41/,
		"$what: refused with SQLSTATE 55000");
	like($stderr, qr/HINT:  .*snowflake\.worker_id.*snowflake_adopt_worker_id\(\)/s,
		"$what: the hint gives both ways out");
	is($node->safe_psql('postgres', 'SELECT generating FROM snowflake_status'),
		'f', "$what: snowflake_status says it is not generating");
}

# 1. pg_basebackup started without standby.signal.
my $clone = PostgreSQL::Test::Cluster->new('clone');
$clone->init_from_backup($source, 'copy');
$clone->start;
refused($clone, 'a base backup started as a primary');
ok($clone->log_contains('restored from a copy of another server'), 'the server log says why at start');
is(read_lease($clone, 'fence')->{worker_id}, '41', 'pg_snowflake/fence names the source\'s worker id');
# The source is unaffected.
cmp_ok($source->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', 0, 'the source still generates');

$clone->restart;
refused($clone, 'the copy after a restart (no backup_label any more)');

# Its own worker id: generation at once, no restart.
$clone->append_conf('postgresql.conf', "snowflake.worker_id = 42\n");
$clone->reload;
$clone->poll_query_until('postgres', 'SELECT worker_id = 42 FROM snowflake_status')
  or die 'the new worker id did not take effect';
is( $clone->safe_psql('postgres', 'SELECT (snowflake_decode(snowflake_nextval())).worker_id'),
	'42', 'with a worker id of its own the copy generates');
is($clone->safe_psql('postgres', 'SELECT generating FROM snowflake_status'),
	't', 'snowflake_status says it is generating');
$clone->stop;

# 2. A point-in-time restore (recovery.signal), the source gone for good: adopt.
$source->safe_psql('postgres', 'SELECT pg_switch_wal()');
my $pitr = PostgreSQL::Test::Cluster->new('pitr');
# recovery.signal, not standby.signal: recovery ends at the end of the archive.
$pitr->init_from_backup($source, 'copy', has_restoring => 1, standby => 0);
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'recovery did not end';
refused($pitr, 'a point-in-time restore');

$pitr->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my ($stdout, $stderr);
$pitr->psql('postgres', 'SELECT snowflake_adopt_worker_id()',
	extra_params => [ '-U', 'plain' ], stderr => \$stderr);
like($stderr, qr/permission denied for function snowflake_adopt_worker_id/,
	'a role without the grant cannot adopt');
refused($pitr, 'after the refused adoption');

is($pitr->safe_psql('postgres', 'SELECT snowflake_adopt_worker_id()'),
	'41', 'snowflake_adopt_worker_id() returns the worker id adopted');
ok(!-e $pitr->data_dir . '/pg_snowflake/fence', 'the fence file is gone');
ok($pitr->log_contains('worker id 41 adopted'), 'the adoption is logged');
my $adopted = $pitr->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($pitr->safe_psql('postgres', "SELECT (snowflake_decode($adopted)).worker_id"),
	'41', 'the adopted worker id generates');
$pitr->restart;
cmp_ok($pitr->safe_psql('postgres', 'SELECT snowflake_nextval()'),
	'>', $adopted, 'and keeps generating after a restart, above the ids before');
$pitr->stop;

# 3. A streaming standby, promoted: failover needs no step.
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
ok(!-e $standby->data_dir . '/pg_snowflake/fence', 'a standby has no fence');

done_testing();
