# Blue/green by logical replication: blue, a running server with worker id 5,
# publishes its table; green is a NEW cluster (initdb, not a copy: no fence
# applies), built with blue's settings and blue's schema (pg_dump
# --schema-only), subscribed to blue. At the switch-over blue still runs
# (connections not yet drained): both are asked for ids at the same instant.
#   - the naive way, green with blue's snowflake.worker_id = 5: both issue the
#     same ids (the count is asserted > 0 and printed: the hazard);
#   - the way, green given a worker id of its own (6, by a reload): 0 ids
#     issued by both; rows inserted on blue after the switch, while green
#     inserts too, replicate to green with no primary-key conflict (no apply
#     or sync error counted, no "duplicate key" in green's log), and every id
#     green issues after the switch is above every id it received from blue
#     before it (time-ordered, the clocks being one machine's).
# Snowflake ids replicate as plain bigint values; nothing here needs
# PostgreSQL 19's replication of sequences (a snowflake id has no sequence).
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();
use SnowflakeTest;

# The settings blue runs with; green is built with the same ones.
my $settings = "max_connections = 20\n"
  . "max_worker_processes = 16\n"
  . "max_logical_replication_workers = 8\n";

# Runs $sql on every node at the same instant: each in a psql session already
# connected and answering, the statement written to all of them at once.
# Returns the seconds from that instant until all had answered, then, for
# each node, the lines it printed.
sub at_once
{
	my ($sql, @nodes) = @_;
	my @sessions;
	for my $node (@nodes)
	{
		my $s = { in => "SELECT 'ready';\n", out => '', err => '', name => $node->name };
		$s->{run} = IPC::Run::start(
			[ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
			'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err},
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
		push @sessions, $s;
	}
	for my $s (@sessions)
	{
		$s->{run}->pump until $s->{out} =~ /^ready$/m;
		$s->{out} = '';
	}
	$_->{in} = "$sql;\n\\q\n" for @sessions;
	my $released = Time::HiRes::time();
	for my $s (@sessions)
	{
		$s->{run}->pump_nb while length $s->{in};
	}
	for my $s (@sessions)
	{
		$s->{run}->finish or die "$s->{name}: psql failed: $s->{err}";
	}
	my $seconds = Time::HiRes::time() - $released;
	return ($seconds, map { [ split /\n/, $_->{out} ] } @sessions);
}

# How many of the ids in the list $other are also in the list $one.
sub both_issued
{
	my ($one, $other) = @_;
	my %seen = map { $_ => 1 } @$one;
	return scalar grep { $seen{$_} } @$other;
}

# --- blue: the running server, its table and its publication ----------------
my $blue = snowflake_node('blue', 5, $settings, allows_streaming => 'logical');
$blue->start;
$blue->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE PUBLICATION orders_pub FOR TABLE orders;
INSERT INTO orders (v) SELECT g FROM generate_series(1, 1000) g;
});

# --- green: a new cluster with blue's settings (the naive way: worker id 5) --
my $green = snowflake_node('green', 5, $settings, allows_streaming => 'logical');
$green->start;
my $schema = PostgreSQL::Test::Utils::tempdir() . '/schema.sql';
command_ok([ 'pg_dump', '--schema-only', '-f', $schema, '-d', $blue->connstr('postgres') ],
	"blue's schema dumped (pg_dump --schema-only)");
command_ok([ $green->installed_command('psql'), '-XAq', '-v', 'ON_ERROR_STOP=1', '-f', $schema, '-d', $green->connstr('postgres') ],
	"blue's schema restored into green (the extension, the table and its DEFAULT)");
$green->safe_psql('postgres',
	"CREATE SUBSCRIPTION from_blue CONNECTION 'host=" . $blue->host . ' port=' . $blue->port
	  . " dbname=postgres' PUBLICATION orders_pub");
$green->wait_for_subscription_sync($blue, 'from_blue');
my $before = $blue->safe_psql('postgres', 'SELECT max(id) FROM orders');
is($green->safe_psql('postgres', 'SELECT count(*) || \' \' || max(id) FROM orders'),
	"1000 $before", 'green holds the rows blue inserted before the switch');
is_deeply(read_lease($green)->{fenced}, [], 'green is a new cluster, not a copy: its lease fences no worker id');
is($green->safe_psql('postgres', 'SELECT generating, worker_id FROM snowflake_status'),
	't|5', "green with blue's settings generates under blue's worker id 5 (nothing tells it from blue)");

# --- the switch-over, blue still running: the naive way ----------------------
my $ask = 'SELECT snowflake_nextval() FROM generate_series(1, 200000)';
my ($seconds, $from_blue, $from_green) = at_once($ask, $blue, $green);
my $same = both_issued($from_blue, $from_green);
is(scalar(@$from_blue) . ' ' . scalar(@$from_green), '200000 200000', 'worker id 5 on both: each issued 200,000 ids');
cmp_ok($same, '>', 0, "worker id 5 on both, asked at once: ids issued by both ($same)");
note sprintf('blue and green both under worker id 5, 200,000 ids asked of each at once: '
	  . '%d ids issued by both (%.1f%% of green\'s), in %.2f s', $same, 100 * $same / 200000, $seconds);

# --- the way: green's own worker id, by a reload ------------------------------
set_worker_id($green, 6);
is($green->safe_psql('postgres', 'SELECT generating, worker_id FROM snowflake_status'),
	't|6', 'green reloaded with a worker id of its own (6): it generates under it');
($seconds, $from_blue, $from_green) = at_once($ask, $blue, $green);
is(scalar(@$from_blue) . ' ' . scalar(@$from_green), '200000 200000', 'worker ids 5 and 6: each issued 200,000 ids');
is(both_issued($from_blue, $from_green), 0, 'worker ids 5 and 6, asked at once: 0 ids issued by both');
note sprintf('blue (5) and green (6), 200,000 ids asked of each at once: %d ids issued by both, in %.2f s',
	both_issued($from_blue, $from_green), $seconds);

# Both insert at once: green takes the writes, blue still serves stragglers,
# whose rows replicate to green.
my $insert = 'INSERT INTO orders (v) SELECT g FROM generate_series(1, 100000) g RETURNING id';
($seconds, $from_blue, $from_green) = at_once($insert, $blue, $green);
is(scalar(@$from_blue) . ' ' . scalar(@$from_green), '100000 100000', 'after the switch: 100,000 rows inserted on each');
is(both_issued($from_blue, $from_green), 0, 'after the switch: 0 ids inserted on both');
$green->poll_query_until('postgres', 'SELECT count(*) = 201000 FROM orders')
  or die 'green did not receive the rows blue inserted after the switch: '
  . $green->safe_psql('postgres', 'SELECT count(*) FROM orders');
my $blue_rows = q{SELECT count(*) || ' ' || md5(string_agg(id::text, ',' ORDER BY id)) FROM orders
                   WHERE (snowflake_decode(id)).worker_id = 5};
is($green->safe_psql('postgres', $blue_rows), $blue->safe_psql('postgres', $blue_rows),
	"green holds every row blue inserted, before and after the switch (count and digest)");
is( $green->safe_psql('postgres',
		# every *error_count column (19 splits sync_error_count into tables' and sequences')
		q{SELECT sum(e.value::bigint) FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
		   WHERE e.key LIKE '%error_count'}),
	'0', "green's subscription: no apply or sync error counted");
is(log_count($green, qr/conflict|duplicate key/i), 0, "green's log: no conflict, no duplicate key");
my $after_min = $green->safe_psql('postgres', 'SELECT min(id) FROM orders WHERE (snowflake_decode(id)).worker_id = 6');
cmp_ok($after_min, '>', $before,
	'time-ordered: every id green inserted after the switch is above every id it received from blue before it');
note "last id replicated from blue before the switch: $before; green's first row after it: $after_min ("
  . ((time_of($after_min) - time_of($before))) . ' ms later)';

$_->stop for $green, $blue;
done_testing();
