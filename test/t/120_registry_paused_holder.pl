# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   5. a holder stopped (SIGSTOP) past its window while another node is
#      granted its worker id, then resumed: no id at or past its window's end
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

my $registry = registry_server('registry');

# ---------------------------------------------------------------------------
# 5. a holder stopped past its window while another node is granted its worker id
{
	my $one = registry_create($registry, 'one', '[0,1)', '1 s');
	my $holder = registry_node('p', $one);
	$holder->start;
	$holder->safe_psql('postgres', TRY_INSERT_SCHEMA);
	wait_for_worker($holder);
	my $load = start_load($holder, 60, 100);
	$holder->poll_query_until('postgres', 'SELECT count(*) > 10 FROM ids') or die 'no load';
	signal_node($holder, 'STOP');
	my $until_ms;
	$registry->poll_query_until('one', 'SELECT clock_timestamp() > to_timestamp((expires_ms + 1500) / 1000.0) FROM snowflake_registry.workers')
	  or die 'the window did not end';
	$until_ms = $registry->safe_psql('one', 'SELECT expires_ms FROM snowflake_registry.workers');
	my $other = registry_node('q', $one);
	$other->start;
	$other->safe_psql('postgres', TRY_INSERT_SCHEMA);
	is(wait_for_worker($other), 0, 'with the holder stopped past its window and the quarantine, another node is granted its worker id');
	$other->safe_psql('postgres', 'INSERT INTO ids (id) SELECT snowflake_nextvals(2000)');
	signal_node($holder, 'CONT');
	$holder->poll_query_until('postgres', "SELECT registry_error LIKE 'no worker id is free%' FROM snowflake_status")
	  or die 'the resumed holder did not find its grant lost';
	$holder->poll_query_until('postgres', "SELECT count(*) >= 10 FROM errs") or die 'the resumed holder issued no error';
	$load->{run}->kill_kill;
	ok($holder->log_contains(qr/the registry no longer grants worker id 0 to this server; claiming another/),
		'the resumed holder logs that its grant is gone');
	my $held = $holder->safe_psql('postgres', "SELECT count(*), max(id) FROM ids");
	my ($held_count) = split /\|/, $held;
	is($holder->safe_psql('postgres', "SELECT count(*) FROM ids WHERE extract(epoch FROM snowflake_to_timestamp(id)) * 1000 >= $until_ms"),
		0, "resumed: 0 ids at or past its window's end ($held_count ids before it)");
	is($other->safe_psql('postgres', "SELECT count(*) FROM ids WHERE extract(epoch FROM snowflake_to_timestamp(id)) * 1000 < $until_ms"),
		0, "the other node's ids are all at or past that end");
	my %seen;
	my $duplicates = 0;
	for my $n ($holder, $other)
	{
		$seen{$_}++ and $duplicates++ for split /\n/, $n->safe_psql('postgres', 'SELECT id FROM ids');
	}
	is($duplicates, 0, sprintf('0 duplicates in the union of both nodes\' %d ids', scalar keys %seen));
	$holder->stop;
	$other->stop;
}

$registry->stop;
done_testing();
