# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   8. failover: a standby claims its own worker id in recovery; promoted while
#      the registry is down, it generates at once, above its old primary's ids
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min');

# ---------------------------------------------------------------------------
# 8. failover: a standby claims its own worker id; promoted with the registry down, it generates at once
{
	my $primary = registry_node('primary', $conninfo, undef, allows_streaming => 1);
	$primary->start;
	$primary->safe_psql('postgres', TRY_INSERT_SCHEMA);
	my $primary_worker = wait_for_worker($primary);
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	my $standby_worker = wait_for_worker($standby);
	isnt($standby_worker, $primary_worker, "the standby holds a worker id of its own ($standby_worker; the primary's: $primary_worker) while in recovery");
	is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'still a standby');
	$primary->safe_psql('postgres', 'INSERT INTO ids (id) SELECT snowflake_nextvals(5000)');
	my $max = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
	$primary->wait_for_catchup($standby);
	$registry->stop('fast');
	$primary->stop('immediate');
	$standby->promote;
	my $id = $standby->safe_psql('postgres', 'INSERT INTO ids (id) VALUES (snowflake_nextval()) RETURNING id');
	cmp_ok($id, '>', $max, 'promoted with the registry down: an id at once, above every id of its old primary');
	is(($id >> 12) & 1023, $standby_worker, 'under its own worker id');
	$registry->start;
	$standby->stop;
}

$registry->stop;
done_testing();
