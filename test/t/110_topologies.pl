# Many nodes: replication topologies with concurrent writers, each
# node with its own worker id, never collide.
#   - fan-in: three writers publish their table (native logical replication)
#     to one aggregator subscribed to all three: it holds every row exactly
#     once, and snowflake_workers() there shows the three worker ids, no other,
#     each from its one origin; a fourth writer deliberately given writer 1's
#     worker id shows as worker id 1 from two origins;
#   - two-way with pglogical 2 (forward_origins '{}'): both nodes end identical;
#   - two-way with native logical replication (origin = none, PostgreSQL 16+).
# No apply worker logs a conflict or an error. pgbench writes for 3 s a node.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $table = 'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int NOT NULL DEFAULT 1)';

# A connection string without quotes, to put in SQL literals.
sub dsn { return 'host=' . $_[0]->host . ' port=' . $_[0]->port . ' dbname=postgres'; }

# A node for logical replication with room for apply workers; $preload is
# its shared_preload_libraries.
sub logical_node
{
	my ($name, $worker_id, $preload) = @_;
	my $node = snowflake_node(
		$name, $worker_id,
		"shared_preload_libraries = '$preload'\n"
		  . "max_connections = 20\n"
		  . "max_worker_processes = 16\n"
		  . "max_logical_replication_workers = 8\n"
		  . "track_commit_timestamp = on\n",
		allows_streaming => 'logical');
	$node->start;
	$node->safe_psql('postgres', "CREATE EXTENSION snowflake; $table");
	return $node;
}

# Runs pgbench inserting rows on every node at once, 2 clients for 3 s each.
sub write_concurrently
{
	my @nodes  = @_;
	my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
	append_to_file($script, "INSERT INTO t DEFAULT VALUES;\n");
	my @runs;
	for my $node (@nodes)
	{
		my ($out, $err) = ('', '');
		my $run = IPC::Run::start(
			[ 'pgbench', '-n', '-f', $script, '-T', '3', '-c', '2', '-h', $node->host, '-p', $node->port, 'postgres' ],
			'>', \$out, '2>', \$err);
		push @runs, [ $node, $run, \$out, \$err ];
	}
	for (@runs)
	{
		my ($node, $run, $out, $err) = @$_;
		ok($run->finish, $node->name . ': pgbench ran without error') or diag $$err;
		my ($tx) = $$out =~ /number of transactions actually processed: (\d+)/;
		note $node->name . ": $tx rows inserted by pgbench";
	}
}

# The count and a digest of the rows made under a worker id: the query, and
# its result on a node.
sub rows_query
{
	return "SELECT count(*) || ' ' || md5(coalesce(string_agg(id::text, ',' ORDER BY id), '')) FROM t "
	  . "WHERE (snowflake_decode(id)).worker_id = $_[0]";
}
sub rows_of { return $_[0]->safe_psql('postgres', rows_query($_[1])); }

# Waits until $to holds exactly the rows $from made under $worker_id.
sub wait_for_rows
{
	my ($from, $to, $worker_id) = @_;
	my $rows = rows_of($from, $worker_id);
	$to->poll_query_until('postgres', rows_query($worker_id), $rows)
	  or die $to->name . ' did not receive the rows of worker ' . $worker_id;
	return $rows;
}

# No apply worker logged a conflict, a duplicate key or an error.
sub no_conflicts
{
	my ($node, $what) = @_;
	is(log_count($node, qr/conflict|duplicate key/i) + log_count($node, qr/ERROR/), 0,
		$node->name . ": no conflict, duplicate key or ERROR in the log ($what)");
}

# --- fan-in: three writers, one aggregator ---------------------------------
{
	my @writers = map { logical_node("writer$_", $_, 'snowflake') } 1 .. 3;
	my $aggregator = logical_node('aggregator', 100, 'snowflake');
	for my $i (1 .. 3)
	{
		my $writer = $writers[ $i - 1 ];
		$writer->safe_psql('postgres', 'CREATE PUBLICATION p FOR TABLE t');
		$aggregator->safe_psql('postgres',
			"CREATE SUBSCRIPTION from_writer$i CONNECTION '" . dsn($writer) . "' PUBLICATION p");
	}
	$aggregator->wait_for_subscription_sync;

	write_concurrently(@writers);

	my $total = 0;
	for my $i (1 .. 3)
	{
		my $rows = wait_for_rows($writers[ $i - 1 ], $aggregator, $i);
		is(rows_of($aggregator, $i), $rows, "fan-in: the aggregator holds every row of writer $i exactly once");
		my ($count) = split / /, $rows;
		cmp_ok($count, '>', 0, "fan-in: writer $i wrote rows");
		$total += $count;
	}
	is($aggregator->safe_psql('postgres', 'SELECT count(*) FROM t'), $total,
		'fan-in: the aggregator holds no other row');
	is( $aggregator->safe_psql('postgres',
			"SELECT string_agg(worker_id || ':' || rows, ' ' ORDER BY worker_id) FROM snowflake_workers('t')"),
		join(' ', map { "$_:" . (split / /, rows_of($writers[ $_ - 1 ], $_))[0] } 1 .. 3),
		'fan-in: snowflake_workers on the aggregator shows worker ids 1, 2 and 3 with their row counts, no other');
	note "snowflake_workers('t') on the aggregator:\n"
	  . $aggregator->safe_psql('postgres', "SELECT * FROM snowflake_workers('t')", extra_params => ['-P', 'format=aligned', '-P', 'tuples_only=off']);
	is( $aggregator->safe_psql('postgres',
			# every *error_count column (19 splits sync_error_count into tables' and sequences')
			q{SELECT sum(e.value::bigint) FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
			   WHERE e.key LIKE '%error_count'}),
		'0', 'fan-in: no apply or sync error counted');
	no_conflicts($aggregator, 'fan-in');
	is( $aggregator->safe_psql('postgres',
			"SELECT string_agg(worker_id || ':' || array_to_string(origins, ','), ' ' ORDER BY worker_id) FROM snowflake_workers('t')"),
		'1:from_writer1 2:from_writer2 3:from_writer3',
		'fan-in: snowflake_workers names each worker id\'s one origin (track_commit_timestamp)');

	# A fourth writer deliberately given writer 1's worker id: the
	# fleet check on the aggregator reports worker id 1 from two origins.
	my $rogue = logical_node('rogue', 1, 'snowflake');
	$rogue->safe_psql('postgres', 'CREATE PUBLICATION p FOR TABLE t');
	$aggregator->safe_psql('postgres',
		"CREATE SUBSCRIPTION from_rogue CONNECTION '" . dsn($rogue) . "' PUBLICATION p");
	$aggregator->wait_for_subscription_sync;
	$rogue->safe_psql('postgres', 'INSERT INTO t DEFAULT VALUES') for 1 .. 5;
	$aggregator->poll_query_until('postgres', "SELECT count(*) = $total + 5 FROM t")
	  or die 'the rogue writer\'s rows did not arrive';
	is( $aggregator->safe_psql('postgres',
			"SELECT array_to_string(origins, ',') FROM snowflake_workers('t') WHERE worker_id = 1"),
		'from_rogue,from_writer1',
		'two writers sharing worker id 1: snowflake_workers on the aggregator shows its two origins');
	is( $aggregator->safe_psql('postgres',
			"SELECT string_agg(worker_id::text, ' ') FROM snowflake_workers('t') WHERE cardinality(origins) > 1"),
		'1', '... and no other worker id has two');
	note "snowflake_workers('t') on the aggregator, with the rogue writer:\n"
	  . $aggregator->safe_psql('postgres', "SELECT * FROM snowflake_workers('t')", extra_params => ['-P', 'format=aligned', '-P', 'tuples_only=off']);
	$_->stop for @writers, $rogue, $aggregator;
}

# Two nodes replicating t both ways; $subscribe->($node, $other) subscribes
# $node to $other's changes without forwarding changes of other origins.
sub two_way
{
	my ($what, $preload, $setup, $subscribe, $synced) = @_;
	my @nodes = (logical_node("${what}_a", 11, $preload), logical_node("${what}_b", 12, $preload));
	$setup->($_) for @nodes;
	$subscribe->($nodes[0], $nodes[1]);
	$subscribe->($nodes[1], $nodes[0]);
	$synced->($_) for @nodes;

	write_concurrently(@nodes);

	for my $i (0, 1)
	{
		my ($node, $other) = ($nodes[$i], $nodes[ 1 - $i ]);
		my $rows = wait_for_rows($node, $other, 11 + $i);
		is(rows_of($other, 11 + $i), $rows, "$what: " . $other->name . ' holds every row of ' . $node->name);
	}
	my $all = 'SELECT count(*) || \' \' || md5(string_agg(id::text, \',\' ORDER BY id)) FROM t';
	is($nodes[0]->safe_psql('postgres', $all), $nodes[1]->safe_psql('postgres', $all),
		"$what: both nodes end identical");
	is($nodes[0]->safe_psql('postgres', 'SELECT count(*) FROM snowflake_workers(\'t\')'),
		'2', "$what: two worker ids on each node");
	no_conflicts($_, $what) for @nodes;
	$_->stop for @nodes;
}

# --- two-way with pglogical 2 -----------------------------------------------
SKIP:
{
	my $control = PostgreSQL::Test::Cluster->new('probe')->config_data('--sharedir') . '/extension/pglogical.control';
	skip "pglogical is not installed for this PostgreSQL ($control missing): two-way with pglogical not tested", 8
	  unless -e $control;
	two_way(
		'pglogical', 'snowflake,pglogical',
		sub {
			my ($node) = @_;
			# Servers that only let trusted libraries be output plugins
			# (output_plugin_libraries) must be told to trust pglogical's.
			my $trusted = $node->safe_psql('postgres',
				"SELECT setting FROM pg_settings WHERE name = 'output_plugin_libraries'");
			$node->safe_psql('postgres',
				"ALTER SYSTEM SET output_plugin_libraries = "
				  . join(', ', map { "'$_'" } split(/,\s*/, $trusted), 'pglogical_output')
				  . '; SELECT pg_reload_conf()')
			  if $trusted ne '';
			$node->safe_psql(
				'postgres', qq{
CREATE EXTENSION pglogical;
SELECT pglogical.create_node(node_name := '@{[$node->name]}', dsn := '@{[dsn($node)]}');
SELECT pglogical.create_replication_set('snow');
SELECT pglogical.replication_set_add_table('snow', 't');
});
		},
		sub {
			my ($node, $other) = @_;
			$node->safe_psql('postgres',
				"SELECT pglogical.create_subscription(subscription_name := 'from_" . $other->name . "', "
				  . "provider_dsn := '" . dsn($other) . "', replication_sets := ARRAY['snow'], "
				  . "synchronize_structure := false, synchronize_data := false, forward_origins := '{}')");
		},
		sub {
			my ($node) = @_;
			$node->poll_query_until('postgres',
				"SELECT bool_and(status = 'replicating') FROM pglogical.show_subscription_status()")
			  or die $node->name . ': the pglogical subscription is not replicating';
		});
}

# --- two-way with native logical replication, origin = none -----------------
SKIP:
{
	my $version = PostgreSQL::Test::Cluster->new('probe2')->pg_version;
	skip "two-way native logical replication needs origin = none, PostgreSQL 16+ (this is $version)", 8
	  unless $version >= 16;
	two_way(
		'native', 'snowflake',
		sub { $_[0]->safe_psql('postgres', 'CREATE PUBLICATION p FOR TABLE t') },
		sub {
			my ($node, $other) = @_;
			$node->safe_psql('postgres',
				    "CREATE SUBSCRIPTION from_" . $other->name
				  . " CONNECTION '" . dsn($other)
				  . "' PUBLICATION p WITH (origin = none, copy_data = false)");
		},
		sub { $_[0]->wait_for_subscription_sync });
}

done_testing();
