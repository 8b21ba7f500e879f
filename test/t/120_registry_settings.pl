# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   1. settings: snowflake.registry with snowflake.worker_id, or a bad conninfo, refuse to start
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $registry = registry_server('registry');

# ---------------------------------------------------------------------------
# 1. settings
{
	my $both = snowflake_node('both', 3, "snowflake.registry = 'host=/nonexistent dbname=x'\n");
	ok(!$both->start(fail_ok => 1), 'snowflake.worker_id and snowflake.registry both set: the server does not start');
	ok($both->log_contains(qr/parameters "snowflake\.worker_id" and "snowflake\.registry" are both set/),
		'the log says why');
	my $bad = snowflake_node('bad', undef, "snowflake.registry = 'host=x = y'\n");
	ok(!$bad->start(fail_ok => 1), 'a snowflake.registry that is no conninfo: the server does not start');
	ok($bad->log_contains(qr/invalid value for parameter "snowflake\.registry"/), 'the log says why');
	# the conninfo's own options reach the registry's session (the node adds
	# synchronous_commit after them): read-only transactions, so no claim
	my $conninfo = registry_create($registry, 'options', '[0,4)', '1 hour');
	my $with_options = registry_node('with_options', "$conninfo options=''-c default_transaction_read_only=on''");
	$with_options->start;
	$with_options->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	ok($with_options->poll_query_until('postgres', "SELECT registry_error LIKE '%read-only transaction%' FROM snowflake_status"),
		'options in snowflake.registry reach the registry\'s session (its claims are read-only)');
	$with_options->stop;
}

$registry->stop;
done_testing();
