# A registry never grants a window it may have granted before, and its grace
# period begins once per life and ends on time, whoever calls. Every start of
# the registry's server may be a rollback (a base backup restored, a snapshot,
# a copy started): it begins a new life, its grace anchored at the start.
# Registries here: a 6 s maximum window and 1 s skew bound (a 7 s grace),
# 20 s in 1; nodes: the same windows, renewed every 500 ms.
#   1. the registry's server restored from a base backup taken before a
#      holder's grant, at the same address, under load: the holder presents
#      its window and is reinstated, a new node waits the grace: no duplicate
#      (before: the holder's worker id granted again at once)
#   2. only claimers: the registry restarted while every node restarts, and
#      20 clients calling life and claim in one statement (a claim refused in
#      the grace rolls back the life it began): every node issues ids within
#      one grace plus one renewal of the registry's start
#  2b. the same after a new life begun at its first call (rolled back by
#      every refused claim of the statement that began it, before: it never
#      ended)
#   3. a grant the registry does not know, presented by its holder (a rollback
#      without a restart): a new life begins, the window is reinstated
#  3b. a rolled-back registry granting a held worker id again before its
#      holder renews: the holder is refused (a conflict) and stops
#   4. the registry's synchronous standby promoted while its primary runs: the
#      old primary commits no renewal the standby has not (its holder is
#      refused from its window's end), the promoted one grants after its
#      grace: no two registries grant, no duplicate
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# ms since 1970 by the registry's clock
sub registry_ms
{
	my ($server, $sql) = @_;
	return $server->safe_psql('fleet', $sql =~ /^SELECT/ ? $sql : "SELECT ($sql)::bigint");
}

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
	my $n = registry_node('newcomer', $conninfo, $window);
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

# ---------------------------------------------------------------------------
# 3. a grant the registry does not know, presented in a renewal of its life
{
	my $registry = registry_server('reg_forgot');
	my $conninfo = registry_create($registry, 'fleet', '[0,2)', '0', '30s');    # a 31 s grace: room for a new node's start
	my $h = registry_node('forgotten', $conninfo);
	my ($w) = start_and_claim($h);
	# the registry forgets the grant, as a snapshot of its memory taken before
	# it would (its rows as its functions write them: no restore to detect)
	$registry->safe_psql('fleet', qq{
		DELETE FROM snowflake_registry.grants WHERE worker_id = $w;
		UPDATE snowflake_registry.workers SET holder = NULL, fencing_epoch = 0, high_water_ms = 0, expires_ms = NULL,
		       written_xid = _snowflake_registry_writer() WHERE worker_id = $w;});
	$registry->poll_query_until('fleet', "SELECT life_change ~ '^rolled back: worker id $w presented' FROM snowflake_registry.settings")
	  or die 'no new life began';
	$registry->poll_query_until('fleet', "SELECT holder_name LIKE '%forgotten%' FROM snowflake_registry.workers WHERE worker_id = $w")
	  or die 'the window was not reinstated';
	is($registry->safe_psql('fleet', 'SELECT grace_until_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM snowflake_registry.settings'),
		't', 'an unknown grant presented begins a new life: a grace period');
	is($h->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w, 'the holder keeps its worker id, reinstated');
	my $n = registry_node('during_grace', $conninfo);
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$n->poll_query_until('postgres', q{SELECT registry_error ~ 'grants no new window until' FROM snowflake_status})
	  or die 'the new node does not say it waits for the grace';
	is($n->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowflake_status'), 't',
		'a new node waits for the grace, and snowflake_status says until when');
	isnt(wait_for_worker($n), $w, 'after the grace it is granted another worker id');
	$_->stop for $h, $n;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 3b. a rolled-back registry (no start) grants a held worker id again, with
# the holder's own fencing epoch, before the holder renews: at its renewal
# the holder is refused (a conflict) and stops issuing under it at once
{
	my $registry = registry_server('reg_twice');
	my $conninfo = registry_create($registry, 'fleet', '[0,1)', '0', '30s');
	my $h = registry_node('twice_holder', $conninfo, "snowflake.registry_window = '30s'\n");
	my ($w) = start_and_claim($h);
	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;
	$registry->safe_psql('fleet', qq{
		DELETE FROM snowflake_registry.grants WHERE worker_id = $w;
		UPDATE snowflake_registry.workers SET holder = NULL, fencing_epoch = 0, high_water_ms = 0, expires_ms = NULL,
		       written_xid = _snowflake_registry_writer() WHERE worker_id = $w;});
	my $n = registry_node('twice_newcomer', $conninfo);
	is((start_and_claim($n))[0], $w, 'the rolled-back registry grants the held worker id again, at once');
	kill 'CONT', $worker;
	$h->poll_query_until('postgres', 'SELECT NOT generating FROM snowflake_status')
	  or die 'the holder goes on issuing under a worker id granted twice';
	ok($h->log_contains(qr/refused to reinstate the window of worker id $w: worker id $w was granted to/),
		'the holder, renewing, is told of the conflict and stops issuing under its worker id');
	like($registry->safe_psql('fleet', 'SELECT life_change FROM snowflake_registry.settings'),
		qr/^rolled back: worker id $w presented with fencing epoch \d+, which it does not know or granted again/, 'the registry begins a new life');
	$_->stop for $h, $n;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 4. split brain: the synchronous standby promoted beside its running primary
{
	my $primary = PostgreSQL::Test::Cluster->new('reg_sync_primary');
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf',
		"max_connections = 100\nlog_statement = none\nsynchronous_standby_names = 'reg_sync_standby'\n");
	$primary->start;
	$primary->backup('sync');
	my $standby = PostgreSQL::Test::Cluster->new('reg_sync_standby');
	$standby->init_from_backup($primary, 'sync', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "synchronous_standby_names = ''\n");
	$standby->start;
	$primary->poll_query_until('postgres', q{SELECT sync_state = 'sync' FROM pg_stat_replication})
	  or die 'the standby is not synchronous';
	my $conninfo = registry_create($primary, 'fleet', '[0,1)', '0', '6s');
	my $h = registry_node('sync_holder', $conninfo);
	my ($w) = start_and_claim($h);
	my @loads = (start_fleet_load($h));
	$h->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	$standby->promote;    # the old primary still runs, and its holder still reaches it
	my $n = registry_node('sync_newcomer', registry_conninfo($standby, 'fleet'));
	my ($wn, $waited) = start_and_claim($n);
	push @loads, start_fleet_load($n);
	$n->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on the new node';
	$_->kill_kill for @loads;
	is($wn, $w, 'the promoted registry grants the one worker id once the holder\'s last acknowledged window ended');
	my ($total, $dups) = fleet_duplicates($h, $n);
	is($dups, 0, "the synchronous standby promoted beside its running primary: 0 duplicates in $total ids of 2 nodes");
	cmp_ok($h->safe_psql('postgres', 'SELECT count(*) FROM errs'), '>', 0,
		'the holder on the old primary is refused from its window\'s end: its renewals never commit there');
	like($h->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status'), qr/timed out/,
		'its renewals wait for the standby that was promoted');
	note sprintf('split brain, synchronous: the new node granted after %.1f s; the holder refused after its window', $waited);
	$_->stop for $h, $n;
	$standby->stop;
	$primary->stop('immediate');
}

done_testing();
