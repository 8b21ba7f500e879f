# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms,
# under load (100 calls of 100 ids a second each).
#   1. the registry restored from a base backup taken after holder A's grant;
#      meanwhile A's window ended (A cut off) and its worker id, released by
#      hand, went to C; A comes back first and presents its ended window (R5)
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
# 1. an ended window presented to a restored registry
{
	my ($registry, $conninfo) = one_id_registry('reg_ended');
	my $a = registry_node('a_ended', $conninfo);
	my ($w) = start_and_claim($a);
	$registry->backup('after_grant');
	my @loads = (start_fleet_load($a));
	$a->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on a';
	# A cut off until its window ended
	my $aw = registry_worker($a);
	kill 'STOP', $aw;
	$a->poll_query_until('postgres', q{SELECT count(*) > 0 FROM errs WHERE sqlstate = '55000'})
	  or die "a's window did not end";
	# its worker id released by hand (it looked gone) and claimed by C
	$registry->safe_psql('fleet', "SELECT snowflake_registry_release($w)");
	my $c = registry_node('c_ended', "$conninfo user=cut");
	my ($wc) = start_and_claim($c);
	is($wc, $w, "the new node is granted worker id $w, released by hand");
	push @loads, start_fleet_load($c);
	$c->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on c';
	# the registry restored (it forgets the release and C's grant), C cut
	# off from it; A comes back first
	cut_off($registry);
	restore_registry($registry, 'after_grant');
	cut_off($registry);
	my $offset = -s $a->logfile;
	kill 'CONT', $aw;
	$a->poll_query_until('postgres', q{SELECT registry_reached > now() - interval '1 s' FROM snowflake_status})
	  or die 'a did not reach the registry again';
	# both under load past C's next renewals
	my $until = ms_now() + 3000;
	usleep(100_000) while ms_now() < $until;
	$_->kill_kill for @loads;
	my ($total, $dups) = fleet_duplicates($a, $c);
	is($dups, 0, "an ended window presented to a restored registry: 0 duplicates in $total ids of 2 nodes");
	ok(log_count($a, qr/the window presented ended at/, $offset) > 0,
		'the holder is told its window ended: not reinstated') or diag(slurp_file($a->logfile, $offset));
	$_->stop for $a, $c;
	$registry->stop;
}

done_testing();
