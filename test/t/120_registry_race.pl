# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   7. 200 claimants racing for 10 free worker ids: each granted once
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $registry = registry_server('registry');

# ---------------------------------------------------------------------------
# 7. 200 claimants racing for 10 free worker ids
{
	registry_create($registry, 'race', '[0,10)', '10 min');
	my $claim = PostgreSQL::Test::Utils::tempdir() . '/claim.sql';
	append_to_file($claim, "SELECT * FROM snowflake_registry_claim('holder-' || :client_id, 'racer ' || :client_id, NULL, 1023, 60000, "
		  . DEFAULT_EPOCH_MS . ", 'time=41 worker=10 sequence=12');\n");
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-f', $claim, '-c', '200', '-j', '2', '-t', '1',
		'-h', $registry->host, '-p', $registry->port, 'race' ], '>', \$out, '2>', \$err);
	my $refused = () = $err =~ /no worker id is free in the snowflake registry/g;
	is($refused, 190, '190 of the 200 claims refused: no worker id free');
	is($registry->safe_psql('race', 'SELECT count(*), count(DISTINCT worker_id), count(DISTINCT holder_name) FROM snowflake_registry.grants'),
		'10|10|10', '10 grants, each of another worker id to another claimant');
	is($registry->safe_psql('race', "SELECT count(*), count(DISTINCT holder) FROM snowflake_registry.workers WHERE holder IS NOT NULL"),
		'10|10', 'each worker id held once');
}

$registry->stop;
done_testing();
