# The registry's load: what 200 simulated holders' renewals cost it, in WAL
# and in calls a second (docs/registry.md).
# prove: alone (measures throughput)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# ---------------------------------------------------------------------------
# 4. the registry's load: 200 holders renewing every 30 s, then unthrottled
{
	my $registry = registry_server('reg_load');
	registry_create($registry, 'load', '[0,1024)', '10 min', '10 min');
	$registry->safe_psql('load', q{
		CREATE TABLE holders AS
		  SELECT n, c.*, l.registry_id, l.life, 'holder-' || n AS holder, 'node ' || n AS holder_name
		    FROM generate_series(1, 200) n,
		         LATERAL snowflake_registry_claim('holder-' || n, 'node ' || n, NULL, 1023, 600000, 1704067200000,
		                                          'time=41 worker=10 sequence=12') c,
		         LATERAL snowflake_registry_life() l});
	my $renew = PostgreSQL::Test::Utils::tempdir() . '/renew.sql';
	append_to_file($renew, "\\set h random(1, 200)\n"
		  . "SELECT p.outcome FROM holders h, snowflake_registry_present(h.worker_id, h.fencing_epoch, h.holder, h.holder_name, "
		  . "h.from_ms, h.until_ms, 600000, h.registry_id, h.life) p WHERE h.n = :h;\n");
	# renewals (count, a second) and WAL bytes, of a pgbench run
	my $run = sub {
		my (@options) = @_;
		my $lsn = $registry->safe_psql('load', 'SELECT pg_current_wal_lsn()');
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'pgbench', '-n', '-f', $renew, @options, '-h', $registry->host, '-p', $registry->port, 'load' ],
			'>', \$out, '2>', \$err) or die "pgbench: $err";
		my ($count) = $out =~ /number of transactions actually processed: (\d+)/ or die "pgbench: $out";
		my ($tps) = $out =~ /tps = ([\d.]+)/;
		my $wal = $registry->safe_psql('load', "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn')");
		return ($count, $tps, $wal);
	};
	my ($count, $tps, $wal) = $run->('-R', '6.67', '-T', '15', '-c', '2');
	note sprintf('200 holders renewing every 30 s: %.1f calls/s, %d bytes of WAL a second (%d a renewal)', $tps, $wal / 15, $wal / $count);
	cmp_ok($wal / $count, '<', 1000, sprintf('at the renewal rate of 200 servers: %d bytes of WAL a renewal', $wal / $count));
	($count, $tps, $wal) = $run->('-T', '5', '-c', '2');
	note sprintf('unthrottled: %.0f renewals/s, %d bytes of WAL each', $tps, $wal / $count);
	cmp_ok($tps, '>', 333, sprintf('unthrottled: %.0f renewals a second, more than 10,000 servers renewing every 30 s make', $tps));
	is($registry->safe_psql('load', "SELECT count(*) FROM snowflake_registry.workers WHERE holder IS NOT NULL"), 200, 'the 200 grants held');
	$registry->stop;
}

done_testing();
