# A registry restarted while every node restarts, with only claimers: every
# start of the registry's server begins a new life, its grace anchored at the
# start, ending on time whoever calls. 20 clients calling life and claim in
# one statement (a claim refused in the grace rolls back the life it began):
# every node issues ids within one grace plus one renewal of the registry's
# start; the same after a new life begun at its first call (rolled back by
# every refused claim of the statement that began it). Registries: a 6 s
# maximum window and 1 s skew bound (a 7 s grace); nodes: the same windows,
# renewed every 500 ms.
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

# ---------------------------------------------------------------------------
# 2. only claimers: the registry and every node restarted at once
{
	my $registry = registry_server('reg_claimers');
	my $conninfo = registry_create($registry, 'fleet', '[0,32)', '0', '6s');
	my @nodes = map { registry_node("claimer$_", $conninfo) } 1 .. 3;
	start_and_claim($_) for @nodes;

	# 20 clients asking life and claim in one statement, as a node of the
	# first 1.1 code did: each claim refused in the grace rolls its life back
	my $script = PostgreSQL::Test::Utils::tempdir() . '/claim.sql';
	append_to_file($script, q{SELECT c.worker_id FROM snowflake_registry_life() l,
  snowflake_registry_claim('hammer' || :client_id, 'hammer', NULL, 1023, 6000, 1704067200000, 'time=41 worker=10 sequence=12') c;
});
	# a grace left by a clock that ran 10 min ahead is not carried into the next life
	$registry->safe_psql('fleet', 'UPDATE snowflake_registry.settings SET grace_until_ms = grace_until_ms + 600000,
		written_xid = _snowflake_registry_writer()');
	$registry->stop;
	$_->stop for @nodes;
	$registry->start;
	my $started = registry_ms($registry, 'extract(epoch FROM pg_postmaster_start_time()) * 1000');
	my ($out, $err) = ('', '');
	my $hammer = IPC::Run::start([ 'pgbench', '-n', '-f', $script, '-T', '30', '-c', '20',
		'-h', $registry->host, '-p', $registry->port, 'fleet' ], '>', \$out, '2>', \$err);
	$_->start for @nodes;
	for my $node (@nodes)
	{
		wait_for_worker($node);
		cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)'), '==', 1000,
			$node->name . ' issues ids again');
	}
	my $latest = registry_ms($registry,
		"SELECT max(granted_ms) FROM snowflake_registry.grants WHERE holder_name LIKE '%claimer%' AND granted_ms >= $started");
	$hammer->kill_kill;
	my ($grace_until, $began) = split /\|/,
	  $registry->safe_psql('fleet', 'SELECT grace_until_ms, life_began_ms FROM snowflake_registry.settings');
	ok($grace_until >= $started + 7000 && $grace_until <= $began + 7000,
		sprintf('the grace ends 7 s after the first call of the life (%d ms before the one that committed it), however many claims rolled back',
			$began + 7000 - $grace_until));
	# the grace's end, then a claim retried within a renewal (500 ms here) and answered within a call's time-out (1 s)
	cmp_ok($latest - $grace_until, '<=', 1500,
		sprintf('every node issues ids within the grace plus a renewal: the last %.1f s after the start, %d ms after the grace',
			($latest - $started) / 1000, $latest - $grace_until));
	note sprintf('only claimers: the last node issued ids %.1f s after the registry started', ($latest - $started) / 1000);
	ok($nodes[0]->log_contains(qr/grants no new window until .*, the end of its grace period \(its server started at/),
		'a node waiting for the grace logs until when, and why');
	$_->stop for @nodes;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 2b. only claimers after a new life begun at the first call (its identity
# changed: here its recorded timeline), 20 clients claiming in the statement
# that begins it (rolled back each time): the life that a node's own call to
# snowflake_registry_life() begins commits, and its grace ends on time
{
	my $registry = registry_server('reg_first_call');
	my $conninfo = registry_create($registry, 'fleet', '[0,32)', '0', '6s');
	my $script = PostgreSQL::Test::Utils::tempdir() . '/claim.sql';
	append_to_file($script, q{SELECT c.worker_id FROM snowflake_registry_life() l,
  snowflake_registry_claim('hammer' || :client_id, 'hammer', NULL, 1023, 6000, 1704067200000, 'time=41 worker=10 sequence=12') c;
});
	$registry->safe_psql('fleet', 'UPDATE snowflake_registry.settings SET timeline = timeline + 1, written_xid = _snowflake_registry_writer()');
	my ($out, $err) = ('', '');
	my $hammer = IPC::Run::start([ 'pgbench', '-n', '-f', $script, '-T', '40', '-c', '20',
		'-h', $registry->host, '-p', $registry->port, 'fleet' ], '>', \$out, '2>', \$err);
	usleep(1_000_000);
	my @nodes = map { registry_node("first_call$_", $conninfo) } 1 .. 2;
	my @waited = map { (start_and_claim($_))[1] } @nodes;
	$hammer->kill_kill;
	my ($grace, $lives) = split /\|/, $registry->safe_psql('fleet',
		'SELECT grace_until_ms - life_began_ms, (SELECT count(DISTINCT life) FROM snowflake_registry.grants) FROM snowflake_registry.settings');
	cmp_ok($grace, '<', 7000, "one new life, its grace 7 s from the first call that met it, a rolled-back one (its end $grace ms after the call that committed it)");
	cmp_ok($_, '<=', 7.5 + 5, sprintf('a node started during it issues ids within the grace and a retry (%.1f s)', $_)) for @waited;
	$_->stop for @nodes;
	$registry->stop;
}

done_testing();
