# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#  4b. the window's edge, the registry stopped: ids as fast as one backend
#      makes them until refused; none at or past the window's end, the last
#      in the time unit just before it
# prove: sequential (measures latency)
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
# 4b. the window's edge, the registry stopped: from 800 ms before the end, ids
# as fast as one backend makes them (borrowing up to snowflake.max_lead ahead
# of the clock) until refused; the last is in the time unit just before the end
{
	my $edge = registry_node('edge', $conninfo);
	$edge->start;
	$edge->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	wait_for_worker($edge);
	signal_node($registry, 'STOP');
	$edge->poll_query_until('postgres', "SELECT registry_error IS NOT NULL FROM snowflake_status")
	  or die 'the registry outage was not noticed';
	my $until = status($edge, 'window_until');
	my $node = $edge;
	# the window's edge: from 800 ms before it, ids as fast as one backend
	# makes them (borrowing up to snowflake.max_lead ahead of the clock) until
	# refused; the last is in the time unit just before the end
	$node->poll_query_until('postgres', "SELECT clock_timestamp() > '$until'::timestamptz - interval '800 ms'")
	  or die 'the window does not near its end';
	$node->safe_psql('postgres', sprintf(q{
		CREATE TABLE edge (id bigint);
		DO $$
		DECLARE
		    last bigint;
		BEGIN
		    LOOP
		        BEGIN
		            SELECT max(x) INTO last FROM snowflake_nextvals(4096) x;
		            INSERT INTO edge VALUES (last);
		        EXCEPTION WHEN object_not_in_prerequisite_state THEN
		            -- refused: at the window's end, or for a while (the lease
		            -- writer behind on a loaded machine) before it
		            EXIT WHEN clock_timestamp() >= '%s'::timestamptz;
		        END;
		    END LOOP;
		END $$}, $until));
	my $until_ms = $node->safe_psql('postgres', "SELECT round(extract(epoch FROM '$until'::timestamptz) * 1000)");
	my $last = $node->safe_psql('postgres', 'SELECT max(id) FROM edge');
	my $last_ms = DEFAULT_EPOCH_MS + time_of($last);
	cmp_ok($last_ms, '<=', $until_ms - 1, 'ids up to the window\'s edge: none at or past its end');
	# the last in the millisecond before the end, unless the backend was
	# descheduled across it (a loaded machine): within 50 ms of it
	cmp_ok($last_ms, '>=', $until_ms - 50,
		sprintf('ids up to the window\'s edge: the last %d ms before its end', $until_ms - $last_ms));
	signal_node($registry, 'CONT');
	$edge->stop;
}

$registry->stop;
done_testing();
