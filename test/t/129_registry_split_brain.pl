# A registry's synchronous standby promoted while its primary runs: the old
# primary commits no renewal the standby has not (its holder is refused from
# its window's end), the promoted one grants after its grace: no two
# registries grant, no duplicate. Registries: a 6 s maximum window and 1 s
# skew bound (a 7 s grace); nodes: the same windows, renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

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
