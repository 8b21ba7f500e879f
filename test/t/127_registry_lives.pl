# The registry knows its lives: promoted, restored, copied or created afresh,
# it starts a grace period (one maximum window plus the skew bound) in which
# it grants no new window and reinstates the windows holders present. Nodes
# here: 20 s windows renewed every 500 ms (a holder cut off through a
# registry's restart under load keeps its window); registries: a 20 s maximum
# window, so a 21 s grace.
#   1. failover with asynchronous replication: the primary grants a window
#      the standby never saw, dies, the standby is promoted; nodes with a
#      multi-host conninfo follow it; a new node claims: no overlap (1.0:
#      duplicates), its wait is the grace, the holders never wait
#   2. the registry's server lost and created again at the same address with
#      the documented SQL while a holder is cut off from it: no overlap (1.0:
#      duplicates), the holder's window reinstated
#  2b. two registries granting one worker id (a grace ended by hand): the
#      holder presenting its window is refused and stops issuing ids
#   3. a registry on one of the fleet's nodes: its clean shutdown does not
#      wait for itself, and a restart gets its worker id back
#   4. the registry's load: 200 simulated holders renewing (docs/registry.md)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $node_conf = "snowflake.registry_window = '20s'\n";
# ---------------------------------------------------------------------------
# 1. failover of the registry with asynchronous replication
{
	my $primary = PostgreSQL::Test::Cluster->new('reg_primary');
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', "max_connections = 100\nlog_statement = none\n");
	$primary->start;
	registry_create($primary, 'fleet', '[0,1024)', '10 min', '20s');
	my $lives = registry_has_lives($primary, 'fleet');
	$primary->backup('b');
	my $standby = PostgreSQL::Test::Cluster->new('reg_standby');
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	my $conninfo = sprintf('host=%s,%s port=%d,%d dbname=fleet target_session_attrs=read-write',
		$primary->host, $standby->host, $primary->port, $standby->port);

	my $h1 = registry_node('h1', $conninfo, $node_conf);
	my ($w1) = start_and_claim($h1);
	$primary->wait_for_catchup($standby);
	$standby->stop('fast');    # it will never see what follows
	my $h2 = registry_node('h2', $conninfo, $node_conf);
	my ($w2) = start_and_claim($h2);
	note "holders: h1 worker id $w1 (the standby saw its grant), h2 worker id $w2 (it did not)";
	my @loads = map { start_fleet_load($_) } $h1, $h2;
	$h2->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	# h2's registry worker is cut off through the failover, so that a new
	# node asks the promoted registry first
	my $h2_worker = background_worker_pid($h2, qr/snowflake registry worker/);
	kill 'STOP', $h2_worker;
	$primary->stop('immediate');    # the primary is lost, with h2's grant
	my $n = registry_node('n', $conninfo, $node_conf);
	$n->start;
	$n->safe_psql('postgres', FLEET_SCHEMA);
	$standby->start;
	$standby->promote;
	my $promoted = time;
	push @loads, start_fleet_load($n);
	# h2 comes back once the new node generates (1.0), or after 3 s of its asking
	while (time - $promoted < 3 && $n->safe_psql('postgres', 'SELECT count(*) FROM ids') < 1000)
	{
		usleep(100_000);
	}
	kill 'CONT', $h2_worker;
	note sprintf('h2 cut off from the registry until %.1f s after the promotion', time - $promoted);
	my $wn = wait_for_worker($n);
	my $waited = time - $promoted;
	$n->poll_query_until('postgres', 'SELECT count(*) > 2000 FROM ids') or die 'no load on the new node';
	$_->kill_kill for @loads;

	my ($total, $dups) = fleet_duplicates($h1, $h2, $n);
	note sprintf('failover: the new node got worker id %s %.1f s after the promotion; %d ids, %d duplicates', $wn, $waited, $total, $dups);
	is($dups, 0, "registry failed over (asynchronous, no operator step): 0 duplicates in $total ids of 3 nodes");
	is(overlaps($standby, 'fleet'), 0, 'the promoted registry\'s grants: no two windows of one worker id overlap');
	cmp_ok($waited, '>=', 20, sprintf('the new node waited out the grace (%.1f s after the promotion; the maximum window 20 s plus the skew bound 1 s)', $waited));
	cmp_ok($waited, '<', 45, 'and not much longer');
	is($h1->safe_psql('postgres', 'SELECT count(*) FROM errs') + $h2->safe_psql('postgres', 'SELECT count(*) FROM errs'),
		0, 'the holders never waited: 0 errors through the failover');
	is($h2->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w2,
		'the holder whose grant was lost keeps its worker id (reinstated)');
	ok($h2->log_contains(qr/snowflake: the registry .* began a new life .*; worker id $w2 presented for reinstatement/),
		'it logs that the registry began a new life');
	ok($h2->log_contains(qr/window of worker id $w2 reinstated by the registry/), 'and that its window was reinstated')
	  if $lives;
	is($lives ? $standby->safe_psql('fleet', 'SELECT count(DISTINCT life) FROM snowflake_registry.grants') : 1, 2,
		'the grants record the life that made them: two lives');
	$_->stop for $h1, $h2, $n;
	$standby->stop;
}

# ---------------------------------------------------------------------------
# 2. the registry's server lost and created again at the same address
{
	my $registry = registry_server('reg_lost');
	my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min', '20s');
	my $blank = PostgreSQL::Test::Cluster->new('reg_blank');    # the new server's data directory
	$blank->init;

	my $h = registry_node('holder', $conninfo, $node_conf);
	my ($w) = start_and_claim($h);
	my @loads = (start_fleet_load($h));
	$h->poll_query_until('postgres', 'SELECT count(*) > 1000 FROM ids') or die 'no load';

	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;    # the holder cut off from the registry
	my $cut = time;
	my $conf = slurp_file($registry->data_dir . '/postgresql.conf');
	$registry->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $registry->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $blank->data_dir, $registry->data_dir);
	open my $fh, '>', $registry->data_dir . '/postgresql.conf' or die $!;
	print $fh $conf;
	close $fh;
	$registry->start;
	# as docs/registry.md gives it, the maximum window being the fleet's
	$registry->safe_psql('postgres', 'CREATE DATABASE fleet');
	$registry->safe_psql('fleet', 'CREATE EXTENSION snowflake');
	registry_create_in($registry, 'fleet', '[0,1024)', '10 min', '20s');

	my $n = registry_node('newcomer', $conninfo, $node_conf);
	$n->start;
	$n->safe_psql('postgres', FLEET_SCHEMA);
	my $asked = time;
	push @loads, start_fleet_load($n);
	# the holder comes back while the newcomer asks (or, on 1.0, generates)
	usleep(3_000_000);
	kill 'CONT', $worker;
	note sprintf('the holder was cut off %.1f s', time - $cut);
	my $wn = wait_for_worker($n);
	my $waited = time - $asked;
	$n->poll_query_until('postgres', 'SELECT count(*) > 2000 FROM ids') or die 'no load on the new node';
	$_->kill_kill for @loads;

	my ($total, $dups) = fleet_duplicates($h, $n);
	note sprintf('registry created again: the new node got worker id %s after %.1f s; %d ids, %d duplicates', $wn, $waited, $total, $dups);
	is($dups, 0, "registry lost and created again at its address: 0 duplicates in $total ids of 2 nodes");
	is(overlaps($registry, 'fleet'), 0, 'the new registry\'s grants: no two windows of one worker id overlap');
	is($registry->safe_psql('fleet', qq{SELECT g.granted_ms >= s.grace_until_ms AND s.grace_until_ms - s.life_began_ms = 21000
		FROM snowflake_registry.grants g, snowflake_registry.settings s WHERE g.worker_id = $wn AND g.holder_name LIKE '%newcomer%'}),
		't', sprintf('the new node was granted a window only after the grace (21 s from the create; it asked for %.1f s)', $waited));
	is($h->safe_psql('postgres', 'SELECT count(*) FROM errs'), 0, 'the holder never waited: 0 errors');
	is($h->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w, 'the holder keeps its worker id (reinstated)');
	ok($h->log_contains(qr/snowflake: the registry .* began a new life \(another registry\)/),
		'the holder logs what changed: another registry');
	$h->stop;
	$n->stop;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 2b. two registries granted one worker id: the registry's database created
# again while a holder is cut off, and its grace period ended by hand (unsafe,
# as the docs say); a new node is granted the holder's worker id. The holder,
# presenting its window, is refused (a conflict) and issues no id under it
# from then on, well before its window would have ended.
{
	my $registry = registry_server('reg_two');
	my $conninfo = registry_create($registry, 'fleet', '[0,1)', '10 min', '60s');
	my $h = registry_node('two_holder', $conninfo, "snowflake.registry_window = '60s'\n");
	my ($w) = start_and_claim($h);
	# a clean restart: the same worker id under the next fencing epoch, so that
	# the other registry's grant of it (epoch 1) differs in epoch, not only in holder
	$h->restart;
	is(wait_for_worker($h), $w, 'a clean restart: the same worker id back');
	is($registry->safe_psql('fleet', "SELECT fencing_epoch FROM snowflake_registry.workers WHERE worker_id = $w"),
		'2', '... under fencing epoch 2');
	my $until = $h->safe_psql('postgres', 'SELECT window_until FROM snowflake_status');
	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;
	$registry->safe_psql('postgres', 'DROP DATABASE fleet WITH (FORCE)');
	registry_create($registry, 'fleet', '[0,1)', '10 min', '60s');
	my $n = registry_node('two_newcomer', $conninfo, "snowflake.registry_window = '60s'\n");
	my ($wn) = start_and_claim($n);
	is($wn, $w, "another registry, its grace ended by hand: a new node is granted the holder's worker id $w");
	kill 'CONT', $worker;
	# the registry's answer to the window presented, whichever it is, logged by the holder
	my $answered = qr/refused to reinstate the window of worker id $w|the registry no longer grants worker id $w/;
	my $deadline = time + 180;
	usleep(100_000) until $h->log_contains($answered) or time > $deadline;
	$h->log_contains($answered) or die 'the holder did not present its window';
	my ($ret, $out, $err) = $h->psql('postgres', 'SELECT snowflake_nextval()');
	like($err, qr/the registry's window for snowflake worker id $w ended/,
		'the holder, refused its window by the other registry, issues no id under it');
	is($h->safe_psql('postgres', "SELECT clock_timestamp() < '$until'"), 't', '... before its window would have ended');
	ok($h->log_contains(qr/WARNING:  snowflake: the registry .* refused to reinstate the window of worker id $w: worker id $w was granted to /),
		'and it logs why, naming the other grant');
	$h->stop;
	$n->stop;
	$registry->stop;
}

# ---------------------------------------------------------------------------
# 3. the registry on one of the fleet's own nodes
{
	my $self = registry_node('self', 'dbname=none');
	$self->append_conf('postgresql.conf', "snowflake.registry = '" . registry_conninfo($self, 'fleet') . "'\n");
	$self->start;
	$self->safe_psql('postgres', 'CREATE DATABASE fleet');
	$self->safe_psql('fleet', 'CREATE EXTENSION snowflake');
	registry_create_in($self, 'fleet', '[0,1024)', '10 min', '6s');
	$self->safe_psql('fleet', 'SELECT snowflake_registry_end_grace()');
	$self->safe_psql('postgres', FLEET_SCHEMA);
	my $w = wait_for_worker($self);
	my $max = $self->safe_psql('postgres', 'SELECT max(x) FROM snowflake_nextvals(1000) x');
	my $stopping = time;
	$self->stop;
	my $stop_s = time - $stopping;
	note sprintf('a node hosting its registry stopped in %.2f s', $stop_s);
	cmp_ok($stop_s, '<', 2.5, sprintf('its clean shutdown does not wait for itself (%.2f s; a call to the registry waits 3 s)', $stop_s));
	ok($self->log_contains(qr/snowflake: worker id $w is released at the next start: the registry .* is on this server/),
		'the release is left for the next start');
	my $release_file = $self->data_dir . '/pg_snowflake/registry_release';
	like(slurp_file($release_file),
		qr/\Asnowflake registry release 1\nworker_id $w\nfencing_epoch \d+\nholder [0-9a-f]{32}\nused_until_ms \d+\ncrc32c [0-9a-f]{8}\n\z/,
		'the release file: its version line, the release, its checksum');
	$self->start;
	is(wait_for_worker($self), $w, 'restarted: the same worker id back');
	ok($self->log_contains(qr/snowflake: worker id $w released to the registry .* at this start/), 'released at the start, then claimed');
	ok(!-e $self->data_dir . '/pg_snowflake/registry_release', 'the release file is gone');
	cmp_ok($self->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $max, 'ids go on above the ones before');
	# a damaged release file is removed, said, and the worker id rests until its window ends
	$self->stop;
	my $text = slurp_file($release_file);
	$text =~ s/worker_id (\d)/worker_id 9$1/;
	open(my $fh, '>', $release_file) or die "could not write $release_file: $!";
	print $fh $text;
	close($fh);
	$self->start;
	ok(defined wait_for_worker($self), 'a damaged release file: the node claims a worker id all the same');
	ok($self->log_contains(qr/snowflake: the file "pg_snowflake\/registry_release" is damaged and removed/),
		'a damaged release file is said and removed');
	ok(!-e $release_file, 'the damaged release file is gone');
	$self->stop;
}

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
