# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms,
# under load (100 calls of 100 ids a second each).
#   4. pg_restore --clean into the running registry, no start, its holder cut
#      off; a new node claims (R1: the tables made again are a new life); a 1.0
#      registry's schema restored and given its lives: a grace too
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
# 4. pg_restore --clean into the running registry, no start
{
	my ($registry, $conninfo) = one_id_registry('reg_clean');
	my $dump = PostgreSQL::Test::Utils::tempdir() . '/registry.dump';
	$registry->command_ok([ 'pg_dump', '-Fc', '-n', 'snowflake_registry', '-f', $dump, '-d', $registry->connstr('fleet') ],
		'the registry dumped before any grant');
	my $a = registry_node('a_clean', $conninfo);
	my ($w) = start_and_claim($a);
	my @loads = (start_fleet_load($a));
	$a->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on a';
	my $aw = registry_worker($a);
	kill 'STOP', $aw;
	$registry->command_ok([ 'pg_restore', '--clean', '--if-exists', '-d', $registry->connstr('fleet'), $dump ],
		'pg_restore --clean into the running registry');
	my $b = registry_node('b_clean', $conninfo);
	my ($wb, $seconds) = start_and_claim($b);
	push @loads, start_fleet_load($b);
	$b->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load on b';
	$_->kill_kill for @loads;
	my ($total, $dups) = fleet_duplicates($a, $b);
	is($dups, 0, "pg_restore --clean into the running registry, its holder cut off: 0 duplicates in $total ids");
	cmp_ok($seconds, '>=', 6, sprintf('the new node waited for the grace (%.1f s)', $seconds));
	like($registry->safe_psql('fleet', 'SELECT life_change FROM snowflake_registry.settings'),
		qr/^restored into it: its tables were made again/, 'the restore began a new life');
	kill 'CONT', $aw;
	$_->stop for $a, $b;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 4b. a 1.0 registry's schema restored into a database at 1.1 and given its
# lives by snowflake_registry_add_lives(), as docs/registry.md says: it may
# have forgotten grants, so a new life with a grace
{
	my $server = registry_server('reg_old');
	$server->safe_psql('postgres', 'CREATE DATABASE old10');
	$server->safe_psql('old10', "CREATE EXTENSION snowflake VERSION '1.0'");
	$server->safe_psql('old10', "SELECT snowflake_registry_create('[0,1)', '0')");
	my $dump = PostgreSQL::Test::Utils::tempdir() . '/old10.dump';
	$server->command_ok([ 'pg_dump', '-Fc', '-n', 'snowflake_registry', '-f', $dump, '-d', $server->connstr('old10') ],
		'a 1.0 registry dumped');
	$server->safe_psql('postgres', 'CREATE DATABASE fleet');
	$server->safe_psql('fleet', 'CREATE EXTENSION snowflake');
	$server->command_ok([ 'pg_restore', '-d', $server->connstr('fleet'), $dump ], 'restored into a database at 1.1');
	$server->safe_psql('fleet', 'SELECT snowflake_registry_add_lives()');
	my ($stdout, $stderr) = ('', '');
	$server->psql('fleet', q{SELECT snowflake_registry_claim('n', 'node n', NULL, 1023, 6000, 1704067200000, 'time=41 worker=10 sequence=12')},
		stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/the snowflake registry grants no new window until/, 'its lives added: a new life, no new window in its grace');
	$server->stop;
}

done_testing();
