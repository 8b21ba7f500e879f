# A registry's server lost and created again at the same address with the
# documented SQL while a holder is cut off from it: the new registry's grace
# (one maximum window plus the skew bound) reinstates the holder's window,
# and no window overlaps another. Registries: a 20 s maximum window (a 21 s
# grace); nodes: 20 s windows renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $node_conf = "snowflake.registry_window = '20s'\n";

# ---------------------------------------------------------------------------
# 2. the registry's server lost and created again at the same address
{
	my $registry = registry_server('reg_lost');
	my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min', '20s');
	my $blank = PostgreSQL::Test::Cluster->new('reg_blank');    # the new server's data directory
	$blank->init;

	my $h = registry_node('holder', $conninfo, $node_conf);
	my ($w) = start_and_claim($h);
	my @loads = (start_fleet_load($h));
	$h->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	# the new node's data directory made before the cut, so that the cut lasts
	# the registry's recreation and the 3 s below, not an initdb too
	my $n = registry_node('newcomer', $conninfo, $node_conf);
	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;    # the holder cut off from the registry
	my $cut = time;
	my $conf = slurp_file($registry->data_dir . '/postgresql.conf');
	$registry->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $registry->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $blank->data_dir, $registry->data_dir);
	open my $fh, '>', $registry->data_dir . '/postgresql.conf' or die $!;
	print $fh $conf;
	close $fh;
	$registry->start;
	# as docs/registry.md gives it, the maximum window being the fleet's
	$registry->safe_psql('postgres', 'CREATE DATABASE fleet');
	$registry->safe_psql('fleet', 'CREATE EXTENSION snowflake');
	registry_create_in($registry, 'fleet', '[0,1024)', '10 min', '20s');

	$n->start;
	$n->safe_psql('postgres', FLEET_SCHEMA);
	my $asked = time;
	push @loads, start_fleet_load($n);
	# the holder comes back while the newcomer asks (or, on 1.0, generates)
	usleep(3_000_000);
	kill 'CONT', $worker;
	note sprintf('the holder was cut off %.1f s', time - $cut);
	my ($wn, $waited, $total, $dups) = newcomer_settles($n, $asked, \@loads, $h);
	note sprintf('registry created again: the new node got worker id %s after %.1f s; %d ids, %d duplicates', $wn, $waited, $total, $dups);
	is($dups, 0, "registry lost and created again at its address: 0 duplicates in $total ids of 2 nodes");
	is(overlaps($registry, 'fleet'), 0, 'the new registry\'s grants: no two windows of one worker id overlap');
	is($registry->safe_psql('fleet', qq{SELECT g.granted_ms >= s.grace_until_ms AND s.grace_until_ms - s.life_began_ms = 21000
		FROM snowflake_registry.grants g, snowflake_registry.settings s WHERE g.worker_id = $wn AND g.holder_name LIKE '%newcomer%'}),
		't', sprintf('the new node was granted a window only after the grace (21 s from the create; it asked for %.1f s)', $waited));
	is($h->safe_psql('postgres', 'SELECT count(*) FROM errs'), 0, 'the holder never waited: 0 errors');
	is($h->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w, 'the holder keeps its worker id (reinstated)');
	ok($h->log_contains(qr/snowflake: the registry .* began a new life \(another registry\)/),
		'the holder logs what changed: another registry');
	$h->stop;
	$n->stop;
	$registry->stop;
}

done_testing();
