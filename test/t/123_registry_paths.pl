# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms,
# under load (100 calls of 100 ids a second each).
#   1. the registry restored from a base backup taken after holder A's grant;
#      meanwhile A's window ended (A cut off) and its worker id, released by
#      hand, went to C; A comes back first and presents its ended window (R5)
#   2. A paused while its window is live, its worker id released by hand and
#      claimed by C (then cut off); the registry restored; A resumes and is
#      reinstated (R6: C's window starts one grace after A's; 20 s windows)
#   3. a floor raised ahead, a window granted at it to C (then cut off), the
#      registry created again; D claims after the grace (R3, R4)
#   4. pg_restore --clean into the running registry, no start, its holder cut
#      off; a new node claims (R1: the tables made again are a new life); a 1.0
#      registry's schema restored and given its lives: a grace too
#   5. the registry's clock 60 s behind: named in registry_error, its skew in
#      snowflake_status, a WARNING (R7); 60 s ahead: the node's window still
#      ends within a window of its own clock (R4)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# The registry's functions are the same PL/pgSQL on every major: walked on
# the oldest and the newest leg (docs/development.md, "What each leg tests").
plan skip_all => "the registry's paths run on the 15 and 19 legs (the same SQL on every major)"
  if ($ENV{PG_MAJOR} // '15') =~ /^1[78]$/;

# A registry server that can be backed up, with a registry of one worker id
# and a role a node can be cut off by (cut_off).
sub one_id_registry
{
	my ($name, $window) = @_;
	my $registry = PostgreSQL::Test::Cluster->new($name);
	$registry->init(allows_streaming => 1);
	$registry->append_conf('postgresql.conf', "max_connections = 100\nlog_statement = none\n");
	$registry->start;
	$registry->safe_psql('postgres', 'CREATE ROLE cut SUPERUSER LOGIN');
	return ($registry, registry_create($registry, 'fleet', '[0,1)', '0', $window // '6s'));
}

# A node connecting as the role cut no longer reaches the registry, its
# background worker running on (a network partition).
sub cut_off
{
	my ($registry) = @_;
	$registry->safe_psql('postgres', q{ALTER ROLE cut NOLOGIN;
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'cut'});
	return;
}

# The registry's server replaced by its base backup, at the same address.
sub restore_registry
{
	my ($registry, $backup) = @_;
	$registry->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $registry->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $registry->backup_dir . "/$backup", $registry->data_dir);
	unlink $registry->data_dir . '/postmaster.pid';
	$registry->start;
	return;
}

sub registry_worker { return background_worker_pid($_[0], qr/snowflake registry worker/); }

# The newest id time (ms since 1970) a node has issued.
sub newest_ms
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT coalesce((extract(epoch FROM max(snowflake_to_timestamp(id))) * 1000)::bigint, 0) FROM ids});
}

sub ms_now { return int(time * 1000); }

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

# ---------------------------------------------------------------------------
# 5. the registry's clock set 60 s behind, then 60 s ahead, while it runs
# (libfaketime reading its offset from a file at every call)
my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
SKIP:
{
	skip "libfaketime is not installed ($libfaketime)", 4 unless -e $libfaketime;
	my $registry = PostgreSQL::Test::Cluster->new('reg_clock');
	$registry->init;
	$registry->append_conf('postgresql.conf', "log_statement = none\n");
	my $offset_file = $registry->basedir . '/faketime';
	append_to_file($offset_file, "+0\n");
	{
		local $ENV{LD_PRELOAD}                   = $libfaketime;
		local $ENV{FAKETIME_TIMESTAMP_FILE}      = $offset_file;
		local $ENV{FAKETIME_NO_CACHE}            = '1';
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$registry->start;
	}
	my $conninfo = registry_create($registry, 'fleet', '[0,1)', '0', '6s');
	my $h = registry_node('h_clock', $conninfo, "snowflake.registry_max_skew = '2s'\n");
	start_and_claim($h);
	my $log_offset = -s $h->logfile;
	PostgreSQL::Test::Utils::system_or_bail('sh', '-c', "echo -60 > $offset_file");
	$h->poll_query_until('postgres',
		q{SELECT registry_error LIKE 'the registry''s clock is % ms behind this server''s%' FROM snowflake_status})
	  or diag($h->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status'));
	like($h->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status'),
		qr/^the registry's clock is \d+ ms behind this server's .* more than snowflake\.registry_max_skew \(2000 ms\)/,
		'a registry clock 60 s behind is named in registry_error');
	cmp_ok($h->safe_psql('postgres', 'SELECT registry_clock_skew_ms FROM snowflake_status'), '<', -55000,
		'and measured in snowflake_status.registry_clock_skew_ms');
	ok(log_count($h, qr/WARNING:  snowflake: the registry's clock is \d+ ms behind/, $log_offset) > 0, 'and logged as a WARNING');
	# 60 s ahead: the registry answers ends a minute late by the node's
	# clock; the node's window still ends within its 6 s window (R4)
	PostgreSQL::Test::Utils::system_or_bail('sh', '-c', "echo +60 > $offset_file");
	$h->poll_query_until('postgres', 'SELECT registry_clock_skew_ms > 55000 AND window_until IS NOT NULL FROM snowflake_status')
	  or diag($h->safe_psql('postgres', 'SELECT registry_clock_skew_ms, window_until, registry_error FROM snowflake_status'));
	my $left = $h->safe_psql('postgres',
		q{SELECT (extract(epoch FROM window_until - clock_timestamp()) * 1000)::bigint FROM snowflake_status});
	cmp_ok($left, '<=', 6000, "a registry clock 60 s ahead: the window ends $left ms from this server's clock, within its 6 s window");
	$h->stop;
	$registry->stop;
}

done_testing();
