# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms,
# under load (100 calls of 100 ids a second each).
#   2. A paused while its window is live, its worker id released by hand and
#      claimed by C (then cut off); the registry restored; A resumes and is
#      reinstated (R6: C's window starts one grace after A's; 20 s windows)
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
# 2. a live holder paused, its worker id released by hand and claimed, the
# registry restored, the holder resumed and reinstated
{
	my ($registry, $conninfo) = one_id_registry('reg_paused', '20s');    # room for a loaded machine's pause
	my $window = "snowflake.registry_window = '20s'\n";
	my $a = registry_node('a_paused', $conninfo, $window);
	my ($w) = start_and_claim($a);
	$registry->backup('after_grant');
	my @loads = (start_fleet_load($a));
	$a->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on a';
	my $a_until = $registry->safe_psql('fleet', "SELECT expires_ms FROM snowflake_registry.workers WHERE worker_id = $w");
	signal_node($a, 'STOP');
	$registry->safe_psql('fleet', "SELECT snowflake_registry_release($w)");
	my $c = registry_node('c_paused', "$conninfo user=cut", $window);
	$c->start;
	$c->safe_psql('postgres', FLEET_SCHEMA);
	$registry->poll_query_until('fleet', "SELECT holder_name LIKE '%c_paused%' FROM snowflake_registry.workers WHERE worker_id = $w")
	  or die 'c claimed nothing';
	my $c_from = $registry->safe_psql('fleet', "SELECT window_from_ms FROM snowflake_registry.workers WHERE worker_id = $w");
	cmp_ok($c_from - $a_until, '>=', 21000,
		sprintf('a worker id released by hand: the next window starts one grace (21 s) after the last one ends (%d ms)', $c_from - $a_until));
	cut_off($registry);
	push @loads, start_fleet_load($c);
	restore_registry($registry, 'after_grant');
	cut_off($registry);
	signal_node($a, 'CONT');
	$a->poll_query_until('postgres', q{SELECT registry_reached > now() - interval '1 s' FROM snowflake_status})
	  or die 'a did not reach the registry again';
	# until both ran past C's window's start, under load
	my $past = $c_from + 3000;
	usleep(100_000) while ms_now() < $past;
	$_->kill_kill for @loads;
	my ($total, $dups) = fleet_duplicates($a, $c);
	is($dups, 0, "a paused holder reinstated beside the server its worker id was released to: 0 duplicates in $total ids");
	cmp_ok(newest_ms($a), '>', $a_until, 'the holder issues past its old window: reinstated and renewed');
	$_->stop for $a, $c;
	$registry->stop;
}

done_testing();
