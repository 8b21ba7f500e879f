# A multi-host snowflake.registry whose first host is frozen (SIGSTOP: it
# accepts connections and never answers): each host is tried on its own,
# within its share of a call's time-out, from the last that answered, so a
# frozen host never holds a node (issue 56). The registry's primary, with a
# synchronous standby, is frozen and the standby promoted; nodes name both,
# the frozen one first, with target_session_attrs=read-write:
#   1. a holder reaches the promoted standby within one retry and one call
#      time-out of the promotion, and its ids go on;
#   2. a node restarted while the first host is frozen issues ids within one
#      call time-out of its start;
#   3. the old primary resumed (SIGCONT), its commits waiting for the standby
#      that was promoted: a node restarted again has its claim time out there
#      and issues ids through the next host within one call time-out.
# Registries: a 6 s maximum window; nodes: 6 s windows renewed every 500 ms,
# so a call's time-out is 1 s, 0.5 s a host.
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

# The processes of the frozen server, resumed whatever happens to the test.
my @frozen;
END { kill 'CONT', @frozen if @frozen; }

# Seconds until $condition returns true, polled every 50 ms; undef when it
# did not within $bound seconds.
sub seconds_until
{
	my ($bound, $condition) = @_;
	my $start = time;
	while (time - $start <= $bound)
	{
		return time - $start if $condition->();
		usleep(50_000);
	}
	return undef;
}

# Whether the node issues an id now.
sub issues { return $_[0]->psql('postgres', 'SELECT snowflake_nextval()') == 0; }

# The bound asserted: one call time-out (1 s here), one retry after a failed
# call (0.25 s), and 2 s for the scheduling of a loaded machine.
my $bound = 1 + 0.25 + 2;

my $primary = PostgreSQL::Test::Cluster->new('reg_frozen_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"max_connections = 100\nlog_statement = none\nsynchronous_standby_names = 'reg_frozen_standby'\n");
$primary->start;
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('reg_frozen_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "synchronous_standby_names = ''\n");
$standby->start;
$primary->poll_query_until('postgres', q{SELECT sync_state = 'sync' FROM pg_stat_replication})
  or die 'the standby is not synchronous';
registry_create($primary, 'fleet', '[0,4)', '0', '6s');
my $conninfo = 'host=' . $primary->host . ',' . $standby->host . ' port=' . $primary->port . ',' . $standby->port
  . ' dbname=fleet target_session_attrs=read-write';
my $holder = registry_node('frozen_holder', $conninfo);
my $restarted = registry_node('frozen_restarted', $conninfo);
start_and_claim($_) for $holder, $restarted;
ok(issues($holder) && issues($restarted), 'both nodes claimed from the first host, the primary');

# ---------------------------------------------------------------------------
# 1. the primary frozen, its synchronous standby promoted: the holder follows
@frozen = processes_of($primary);
kill 'STOP', @frozen;
$standby->promote;
# safe here: the registry replicated synchronously (docs/registry.md)
$standby->safe_psql('fleet', q{SELECT snowflake_registry_end_grace('replicated synchronously: the standby was in sync')});
my $promoted = time;
my $reached = seconds_until($bound,
	sub { $holder->safe_psql('postgres', "SELECT registry_reached > to_timestamp($promoted) FROM snowflake_status") eq 't' });
ok(defined $reached,
	sprintf('the holder reaches the promoted standby, the first host frozen (%s; bound %.2f s)',
		defined $reached ? sprintf('%.2f s after the promotion', $reached) : 'not within the bound', $bound))
  or diag 'registry_error: ' . $holder->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status');
ok(issues($holder), 'the holder issues ids through the second host');

# ---------------------------------------------------------------------------
# 2. a node restarted while the first host is frozen
my $stopping = time;
$restarted->stop;
note sprintf('a clean stop with the first host frozen: %.2f s (its release: at most 3 s)', time - $stopping);
my $starting = time;
$restarted->start;
my $issued = seconds_until($bound, sub { issues($restarted) });
ok(defined $issued,
	sprintf('a node restarted while the first host is frozen issues ids (%s; bound %.2f s)',
		defined $issued ? sprintf('%.2f s after its start', time - $starting) : 'not within the bound', $bound))
  or diag 'registry_error: ' . $restarted->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status');

# ---------------------------------------------------------------------------
# 3. the old primary resumed: read-write, its commits waiting for a standby
# that is gone; a node restarted now times out there and moves on
kill 'CONT', @frozen;
@frozen = ();
$primary->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'the old primary does not answer';
$restarted->stop;
$starting = time;
$restarted->start;
$issued = seconds_until($bound, sub { issues($restarted) });
ok(defined $issued,
	sprintf('with the old primary resumed, a restarted node issues ids through the next host (%s; bound %.2f s)',
		defined $issued ? sprintf('%.2f s after its start', time - $starting) : 'not within the bound', $bound))
  or diag 'registry_error: ' . $restarted->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status');
cmp_ok($primary->safe_psql('postgres', q{SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'}),
	'>', 0, 'the old primary holds a node\'s commit waiting for the promoted standby, never acknowledged');
ok(issues($holder), 'the holder, on the second host, issues ids on');

$_->stop for $holder, $restarted;
$standby->stop;
$primary->stop('immediate');
done_testing();
