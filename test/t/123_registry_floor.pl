# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms,
# under load (100 calls of 100 ids a second each).
#   3. a floor raised ahead, a window granted at it to C (then cut off), the
#      registry created again; D claims after the grace (R3, R4)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

# The registry's functions are the same PL/pgSQL on every major: walked on
# the oldest and the newest leg (docs/development.md, "What each leg tests").
plan skip_all => "the registry's paths run on the 15 and 19 legs (the same SQL on every major)"
  if ($ENV{PG_MAJOR} // '15') =~ /^1[78]$/;

# ---------------------------------------------------------------------------
# 3. a window dated ahead (a floor), its holder cut off, the registry created again
{
	my ($registry, $conninfo) = one_id_registry('reg_ahead');
	my $c = registry_node('c_ahead', "$conninfo user=cut");
	my $floor = $registry->safe_psql('fleet',
		q{SELECT (extract(epoch FROM snowflake_registry_raise_floor(now() + interval '20 s')) * 1000)::bigint});
	$c->start;
	$c->safe_psql('postgres', FLEET_SCHEMA);
	$registry->poll_query_until('fleet', 'SELECT holder IS NOT NULL FROM snowflake_registry.workers') or die 'c claimed nothing';
	my ($from, $until) = split /\|/, $registry->safe_psql('fleet', 'SELECT window_from_ms, expires_ms FROM snowflake_registry.workers');
	cmp_ok($until, '<=', ms_now() + 6000, 'a window granted at a floor ahead ends within one maximum window of the grant (R3)');
	cut_off($registry);
	my @loads = (start_fleet_load($c));
	# the registry lost and created again at its address: a new life, a 7 s grace
	$registry->safe_psql('fleet', 'DROP SCHEMA snowflake_registry CASCADE');
	registry_create_in($registry, 'fleet', '[0,1)', '0', '6s');
	my $d = registry_node('d_ahead', $conninfo);
	start_and_claim($d);
	push @loads, start_fleet_load($d);
	my $past = $floor + 7000;
	usleep(100_000) while ms_now() < $past;
	$_->kill_kill for @loads;
	my ($total, $dups) = fleet_duplicates($c, $d);
	is($dups, 0, "a window dated ahead, the registry created again: 0 duplicates in $total ids");
	is($c->safe_psql('postgres', 'SELECT count(*) FROM ids'), 0,
		'the cut-off holder issued nothing: its window, more than a window ahead, was granted empty');
	$_->stop for $c, $d;
	$registry->stop;
}

done_testing();
