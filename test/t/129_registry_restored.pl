# A registry's server restored from a base backup taken before a holder's
# grant, at the same address, under load: every start may be a rollback, so
# the restored registry begins a new life; the holder presents its window and
# is reinstated, a new node waits the grace: no duplicate. Registry: a 20 s
# maximum window and 1 s skew bound (a 21 s grace); nodes: the same windows,
# renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

# ---------------------------------------------------------------------------
# 1. restored from a base backup taken before a holder's grant (20 s windows
# here, a 21 s grace: the holder is cut off from the registry while a new
# node asks, and must not run out of its window meanwhile)
{
	my $registry = PostgreSQL::Test::Cluster->new('reg_restored');
	$registry->init(allows_streaming => 1);
	$registry->append_conf('postgresql.conf', "max_connections = 100\nlog_statement = none\n");
	$registry->start;
	my $conninfo = registry_create($registry, 'fleet', '[0,2)', '0', '20s');
	$registry->backup('before_grant');

	my $window = "snowflake.registry_window = '20s'\n";
	my $h = registry_node('holder', $conninfo, $window);
	my ($w) = start_and_claim($h);
	my @loads = (start_fleet_load($h));
	$h->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	# the new node's data directory made before the cut, so that the cut lasts
	# the registry's restore and the 3 s below, not an initdb too
	my $n = registry_node('newcomer', $conninfo, $window);
	# the registry's server replaced by its base backup, at the same address,
	# while the holder is cut off from it
	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;
	$registry->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $registry->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $registry->backup_dir . '/before_grant', $registry->data_dir);
	unlink $registry->data_dir . '/postmaster.pid';
	$registry->start;
	my $started = registry_ms($registry, 'extract(epoch FROM pg_postmaster_start_time()) * 1000');

	# a new node asks first (the restored registry thinks the holder's worker
	# id free), the holder comes back while it asks
	$n->start;
	$n->safe_psql('postgres', FLEET_SCHEMA);
	push @loads, start_fleet_load($n);
	usleep(3_000_000);
	kill 'CONT', $worker;
	my $wn = wait_for_worker($n);
	$n->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on the new node';
	$_->kill_kill for @loads;
	my ($total, $dups) = fleet_duplicates($h, $n);
	note "the registry restored from a base backup: $dups duplicates in $total ids";
	is($dups, 0, "the registry restored from a base backup before a grant: 0 duplicates in $total ids of 2 nodes");
	isnt($wn, $w, 'the new node is not granted the holder\'s worker id');
	is(overlaps($registry, 'fleet'), 0, 'the restored registry\'s grants: no two windows of one worker id overlap');
	is($registry->safe_psql('fleet', "SELECT life_change ~ '^its server started at' FROM snowflake_registry.settings"),
		't', 'its start began a new life');
	is($registry->safe_psql('fleet', qq{SELECT g.granted_ms >= s.grace_until_ms
		   AND s.grace_until_ms BETWEEN $started + 21000 AND s.life_began_ms + 21000
		FROM snowflake_registry.grants g, snowflake_registry.settings s WHERE g.worker_id = $wn AND g.holder_name LIKE '%newcomer%'}),
		't', 'the new node was granted a window only after the grace, 21 s from the first call after the start');
	is($h->safe_psql('postgres', 'SELECT count(*) FROM errs'), 0, 'the holder never waited: 0 errors');
	is($h->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w, 'the holder keeps its worker id');
	ok($h->log_contains(qr/window of worker id $w reinstated by the registry/), 'its window was reinstated');
	$_->stop for $h, $n;
	$registry->stop;
}

done_testing();
