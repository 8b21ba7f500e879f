# Two registries granting one worker id (a grace ended by hand): the holder
# presenting its window is refused and stops issuing ids. Nodes and registry:
# 60 s windows.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

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

done_testing();
