# A rolled-back registry granting a held worker id again before its holder
# renews: the holder is refused (a conflict) and stops. Registry: a 30 s
# maximum window and 1 s skew bound (a 31 s grace); the holder: 30 s windows,
# the new node 6 s, renewed every 500 ms.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# ---------------------------------------------------------------------------
# 3b. a rolled-back registry (no start) grants a held worker id again, with
# the holder's own fencing epoch, before the holder renews: at its renewal
# the holder is refused (a conflict) and stops issuing under it at once
{
	my $registry = registry_server('reg_twice');
	my $conninfo = registry_create($registry, 'fleet', '[0,1)', '0', '30s');
	my $h = registry_node('twice_holder', $conninfo, "snowflake.registry_window = '30s'\n");
	my ($w) = start_and_claim($h);
	my $worker = background_worker_pid($h, qr/snowflake registry worker/);
	kill 'STOP', $worker;
	$registry->safe_psql('fleet', qq{
		SET snowflake_registry.writing = on;  -- written as the registry's functions write
		DELETE FROM snowflake_registry.grants WHERE worker_id = $w;
		UPDATE snowflake_registry.workers SET holder = NULL, fencing_epoch = 0, high_water_ms = 0, expires_ms = NULL,
		       grants_count = 0, written_xid = _snowflake_registry_writer() WHERE worker_id = $w;});
	my $n = registry_node('twice_newcomer', $conninfo);
	is((start_and_claim($n))[0], $w, 'the rolled-back registry grants the held worker id again, at once');
	kill 'CONT', $worker;
	$h->poll_query_until('postgres', 'SELECT NOT generating FROM snowflake_status')
	  or die 'the holder goes on issuing under a worker id granted twice';
	ok($h->log_contains(qr/refused to reinstate the window of worker id $w: worker id $w was granted to/),
		'the holder, renewing, is told of the conflict and stops issuing under its worker id');
	like($registry->safe_psql('fleet', 'SELECT life_change FROM snowflake_registry.settings'),
		qr/^rolled back: worker id $w presented with fencing epoch \d+, which it does not know or granted again/, 'the registry begins a new life');
	$_->stop for $h, $n;
	$registry->stop;
}

done_testing();
