# A registry's failover with asynchronous replication: the primary grants a
# window the standby never saw and dies; the standby, promoted, begins a life
# whose grace (one maximum window plus the skew bound) grants no new window
# and reinstates the windows holders present. The nodes, with a multi-host
# conninfo, follow it; a new node claims: no window overlaps another, the new
# node's wait is the grace, the holders never wait. Registries: a 20 s
# maximum window (a 21 s grace); nodes: 20 s windows renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $node_conf = "snowflake.registry_window = '20s'\n";
# ---------------------------------------------------------------------------
# 1. failover of the registry with asynchronous replication
{
	my $primary = PostgreSQL::Test::Cluster->new('reg_primary');
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', "max_connections = 100\nlog_statement = none\n");
	$primary->start;
	registry_create($primary, 'fleet', '[0,1024)', '10 min', '20s');
	my $lives = registry_has_lives($primary, 'fleet');
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new('reg_standby');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	my $conninfo = sprintf('host=%s,%s port=%d,%d dbname=fleet target_session_attrs=read-write',
		$primary->host, $standby->host, $primary->port, $standby->port);

	my $h1 = registry_node('h1', $conninfo, $node_conf);
	my ($w1) = start_and_claim($h1);
	$primary->wait_for_catchup($standby);
	$standby->stop('fast');    # it will never see what follows
	my $h2 = registry_node('h2', $conninfo, $node_conf);
	my ($w2) = start_and_claim($h2);
	note "holders: h1 worker id $w1 (the standby saw its grant), h2 worker id $w2 (it did not)";
	my @loads = map { start_fleet_load($_) } $h1, $h2;
	$h2->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	# h2's registry worker is cut off through the failover, so that a new
	# node asks the promoted registry first
	my $h2_worker = background_worker_pid($h2, qr/snowflake registry worker/);
	kill 'STOP', $h2_worker;
	$primary->stop('immediate');    # the primary is lost, with h2's grant
	my $n = registry_node('n', $conninfo, $node_conf);
	$n->start;
	$n->safe_psql('postgres', FLEET_SCHEMA);
	$standby->start;
	$standby->promote;
	my $promoted = time;
	push @loads, start_fleet_load($n);
	# h2 comes back once the new node generates (1.0), or after 3 s of its asking
	while (time - $promoted < 3 && $n->safe_psql('postgres', 'SELECT count(*) FROM ids') < 1000)
	{
		usleep(100_000);
	}
	kill 'CONT', $h2_worker;
	note sprintf('h2 cut off from the registry until %.1f s after the promotion', time - $promoted);
	my ($wn, $waited, $total, $dups) = newcomer_settles($n, $promoted, \@loads, $h1, $h2);
	note sprintf('failover: the new node got worker id %s %.1f s after the promotion; %d ids, %d duplicates', $wn, $waited, $total, $dups);
	is($dups, 0, "registry failed over (asynchronous, no operator step): 0 duplicates in $total ids of 3 nodes");
	is(overlaps($standby, 'fleet'), 0, 'the promoted registry\'s grants: no two windows of one worker id overlap');
	cmp_ok($waited, '>=', 20, sprintf('the new node waited out the grace (%.1f s after the promotion; the maximum window 20 s plus the skew bound 1 s)', $waited));
	cmp_ok($waited, '<', 45, 'and not much longer');
	is($h1->safe_psql('postgres', 'SELECT count(*) FROM errs') + $h2->safe_psql('postgres', 'SELECT count(*) FROM errs'),
		0, 'the holders never waited: 0 errors through the failover');
	is($h2->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w2,
		'the holder whose grant was lost keeps its worker id (reinstated)');
	ok($h2->log_contains(qr/snowflake: the registry .* began a new life .*; worker id $w2 presented for reinstatement/),
		'it logs that the registry began a new life');
	ok($h2->log_contains(qr/window of worker id $w2 reinstated by the registry/), 'and that its window was reinstated')
	  if $lives;
	is($lives ? $standby->safe_psql('fleet', 'SELECT count(DISTINCT life) FROM snowflake_registry.grants') : 1, 2,
		'the grants record the life that made them: two lives');
	$_->stop for $h1, $h2, $n;
	$standby->stop;
}

done_testing();
