# The registry's state reached by other ways than its functions, on real
# servers (test/model/RULES.md R9, R2' and the operator's end of a grace):
# each a path by which 1.1 let two servers issue one id. Registries here:
# one worker id, a 10 s maximum window and 1 s skew bound (an 11 s grace),
# quarantine 0; nodes: 10 s windows renewed every 500 ms, under load (100
# calls of 100 ids a second each), the new node started beside the holder
# with its link to the registry cut until the change is made.
#   1. a data-only restore of the worker and grant tables into the running
#      registry, its holder cut off (SIGSTOP of its registry worker), a new
#      node started: its claim begins a new life and waits out the grace
#   2. a hand write freeing the holder's worker id: the same (its tables'
#      trigger; in 1., their writers)
#   3. the registry created again with a smaller maximum window (6 s, 4 s
#      below the 10 s its holder holds), the holder cut off: the new node
#      waits the longest window a node asked (R2'), not the new maximum
#   4. snowflake_registry_end_grace() on a registry promoted from its
#      asynchronous standby: refused without a reason, naming the promotion
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SnowflakeTest;
use RegistryTest;

# The registry's functions are the same PL/pgSQL on every major: walked on
# the oldest and the newest leg (docs/development.md, "What each leg tests").
plan skip_all => "the registry's paths run on the 15 and 19 legs (the same SQL on every major)"
  if ($ENV{PG_MAJOR} // '15') =~ /^1[78]$/;

# A holder under load, and a new node started beside it with its link to
# the registry cut (it connects as the role `cut`); the holder's registry
# worker stopped (its backends issue on to its window's end), `change` run,
# the new node's link healed: returns the new node's wait for its worker id
# from the change, and the fleet's ids and duplicates.
sub holder_then_newcomer
{
	my ($name, $registry, $conninfo, $window, $change) = @_;
	my $extra = "snowflake.registry_window = '$window'\n";
	my $a = registry_node("${name}_a", $conninfo, $extra);
	start_and_claim($a);
	my @loads = (start_fleet_load($a));
	$a->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on a';
	cut_off($registry);
	my $b = registry_node("${name}_b", "$conninfo user=cut", $extra);
	$b->start;
	$b->safe_psql('postgres', FLEET_SCHEMA);
	push @loads, start_fleet_load($b);
	my $aw = registry_worker($a);
	kill 'STOP', $aw;
	my $since = time;
	$change->();
	$registry->safe_psql('postgres', 'ALTER ROLE cut LOGIN');
	my ($wb, $waited, $total, $dups) = newcomer_settles($b, $since, \@loads, $a);
	kill 'CONT', $aw;
	$_->stop for $a, $b;
	return ($waited, $total, $dups);
}

# ---------------------------------------------------------------------------
# 1. a data-only restore of the worker and grant tables, no start
{
	my ($registry, $conninfo) = one_id_registry('reg_rows', '10s');
	my $dump = PostgreSQL::Test::Utils::tempdir() . '/rows.dump';
	$registry->command_ok([ 'pg_dump', '-Fc', '--data-only', '-t', 'snowflake_registry.workers', '-t', 'snowflake_registry.grants',
		'-f', $dump, '-d', $registry->connstr('fleet') ], 'the worker and grant tables dumped (data only) before any grant');
	my ($waited, $total, $dups) = holder_then_newcomer('rows', $registry, $conninfo, '10s', sub {
		# its triggers off, as a restore that disables them (the rows' writers tell it)
		$registry->safe_psql('fleet', 'SET session_replication_role = replica; TRUNCATE snowflake_registry.workers, snowflake_registry.grants');
		$registry->command_ok([ 'pg_restore', '--data-only', '--disable-triggers', '-d', $registry->connstr('fleet'), $dump ],
			'pg_restore --data-only --disable-triggers of the two tables into the running registry');
	});
	is($dups, 0, "a data-only restore of the worker and grant tables, the holder cut off: 0 duplicates in $total ids");
	cmp_ok($waited, '>=', 10, sprintf('the new node waited for the grace (%.1f s)', $waited));
	like($registry->safe_psql('fleet', 'SELECT life_change FROM snowflake_registry.settings'),
		qr/^restored into it: a row of its workers or grants was written by something else than its functions/, 'the restore began a new life');
	like(slurp_file($registry->logfile), qr/the row of worker id 0 was written by another transaction \(a restore into it, COPY or a hand write\): a new life begins/,
		'the registry logs what it found');
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 2. a hand write freeing the holder's worker id
{
	my ($registry, $conninfo) = one_id_registry('reg_hand', '10s');
	my ($waited, $total, $dups) = holder_then_newcomer('hand', $registry, $conninfo, '10s', sub {
		$registry->safe_psql('fleet', 'UPDATE snowflake_registry.workers SET holder = NULL, expires_ms = 0, high_water_ms = 0');
	});
	is($dups, 0, "a hand write freeing the holder's worker id, the holder cut off: 0 duplicates in $total ids");
	cmp_ok($waited, '>=', 10, sprintf('the new node waited for the grace (%.1f s)', $waited));
	like(slurp_file($registry->logfile), qr/snowflake registry: UPDATE of its table workers by something else than its functions: the next call begins a new life/,
		'the registry logs the write (its tables\' trigger)');
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 3. created again with a maximum window 4 s below the 10 s its holder holds
{
	my ($registry, $conninfo) = one_id_registry('reg_lowered', '10s');
	my ($waited, $total, $dups) = holder_then_newcomer('lowered', $registry, $conninfo, '10s', sub {
		$registry->safe_psql('fleet', q{DROP SCHEMA snowflake_registry CASCADE; SELECT snowflake_registry_create('[0,1)', '0', '6s')});
	});
	is($dups, 0, "the registry created again with a maximum window 4 s below its holder's, the holder cut off: 0 duplicates in $total ids");
	cmp_ok($waited, '>=', 10, sprintf('the new node waited for the longest window asked (10 s) and the skew bound (%.1f s)', $waited));
	is($registry->safe_psql('fleet', 'SELECT last_value FROM snowflake_registry.longest_window'), '10000',
		'the registry recorded the 10 s its nodes asked');
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 4. snowflake_registry_end_grace() on a registry promoted from its
# asynchronous standby
{
	my ($primary, $conninfo) = one_id_registry('reg_async');
	$primary->backup('async');
	my $standby = PostgreSQL::Test::Cluster->new('reg_async_standby');
	$standby->init_from_backup($primary, 'async', has_streaming => 1);
	$standby->start;
	$primary->wait_for_catchup($standby);
	$primary->stop('immediate');
	$standby->promote;
	my ($stdout, $stderr) = ('', '');
	my $ret = $standby->psql('fleet', 'SELECT snowflake_registry_end_grace()', stdout => \$stdout, stderr => \$stderr,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($ret, 0, 'a promoted registry: snowflake_registry_end_grace() without a reason is refused');
	like($stderr, qr/ERROR:  55000: the snowflake registry's grace period is not ended: its life began by a change: promoted or restored: timeline 2, was 1/,
		'... with 55000, naming the promotion');
	my ($block) = readme_blocks('123_registry_rows.pl');
	is($standby->safe_psql('fleet', $block), 't', '... and ended when told why (docs/registry.md\'s block, as printed)');
	like($standby->safe_psql('fleet', 'SELECT life_change FROM snowflake_registry.settings'),
		qr/; grace ended by hand: replicated synchronously: the standby was in sync$/, 'the reason is kept with the life');
	$standby->stop;
}

done_testing();
