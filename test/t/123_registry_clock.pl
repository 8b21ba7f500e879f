# The registry's rules (test/model/RULES.md) on real servers: each path
# where a registry that forgot grants would let two servers issue one id
# without them. Registries here: one worker id, a 6 s maximum window and 1 s skew
# bound (a 7 s grace), quarantine 0; nodes: 6 s windows renewed every 500 ms.
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
