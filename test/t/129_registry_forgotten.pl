# A grant the registry does not know, presented by its holder (the registry
# rolled back without a restart): a new life begins and the window is
# reinstated. Registry: a 30 s maximum window and 1 s skew bound (a 31 s
# grace); nodes: 6 s windows, renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# ---------------------------------------------------------------------------
# 3. a grant the registry does not know, presented in a renewal of its life
{
	my $registry = registry_server('reg_forgot');
	my $conninfo = registry_create($registry, 'fleet', '[0,2)', '0', '30s');    # a 31 s grace: room for a new node's start
	my $h = registry_node('forgotten', $conninfo);
	my ($w) = start_and_claim($h);
	# the registry forgets the grant, as a snapshot of its memory taken before
	# it would (its rows as its functions write them: no restore to detect)
	$registry->safe_psql('fleet', qq{
		SET snowflake_registry.writing = on;  -- written as the registry's functions write
		DELETE FROM snowflake_registry.grants WHERE worker_id = $w;
		UPDATE snowflake_registry.workers SET holder = NULL, fencing_epoch = 0, high_water_ms = 0, expires_ms = NULL,
		       grants_count = 0, written_xid = _snowflake_registry_writer() WHERE worker_id = $w;});
	$registry->poll_query_until('fleet', "SELECT life_change ~ '^rolled back: worker id $w presented' FROM snowflake_registry.settings")
	  or die 'no new life began';
	$registry->poll_query_until('fleet', "SELECT holder_name LIKE '%forgotten%' FROM snowflake_registry.workers WHERE worker_id = $w")
	  or die 'the window was not reinstated';
	is($registry->safe_psql('fleet', 'SELECT grace_until_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM snowflake_registry.settings'),
		't', 'an unknown grant presented begins a new life: a grace period');
	is($h->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $w, 'the holder keeps its worker id, reinstated');
	my $n = registry_node('during_grace', $conninfo);
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$n->poll_query_until('postgres', q{SELECT registry_error ~ 'grants no new window until' FROM snowflake_status})
	  or die 'the new node does not say it waits for the grace';
	is($n->safe_psql('postgres', 'SELECT worker_id IS NULL FROM snowflake_status'), 't',
		'a new node waits for the grace, and snowflake_status says until when');
	isnt(wait_for_worker($n), $w, 'after the grace it is granted another worker id');
	$_->stop for $h, $n;
	$registry->stop;
}

done_testing();
