# Citus: a coordinator (worker id 1, set by hand) and two workers (claiming
# theirs from a registry on the coordinator), set up by the SQL blocks of
# docs/integrations.md's Citus section (each run where its first line says,
# failing with exactly the errors, and their details, it documents). Rows written through every
# node carry that node's worker id, none twice; a lookup by id is routed to one
# shard; a time range on a distributed table partitioned by id ranges prunes
# partitions on the worker. Runs where Citus is installed (test/run builds it
# from ../shared/vendor: 13.2.2 for 15, 14.0.1 for 17 and 18); skips only where
# it is not.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
if (!-e "$pkglibdir/citus.so")
{
	# built from the vendored source for 15 to 18 (test/run, test/citus-build): its absence there is a failure
	if ($ENV{SNOWFLAKE_CITUS_VENDOR} && ($ENV{PG_MAJOR} // '15') =~ /^1[5-8]$/)
	{
		fail("Citus was to be built from $ENV{SNOWFLAKE_CITUS_VENDOR}, but $pkglibdir/citus.so is missing");
		done_testing();
		exit;
	}
	plan skip_all => ($ENV{PG_MAJOR} // '15') > 18
	  ? "no Citus supports PostgreSQL $ENV{PG_MAJOR} (Citus 14.0, the newest, supports 16 to 18; 13.2, 15 to 17)"
	  : "Citus is not built (no $pkglibdir/citus.so)";
}

my $rows_per_node = 4000;
my $preload = "shared_preload_libraries = 'citus,snowflake'\nmax_prepared_transactions = 20\n";
my $coordinator = snowflake_node('coordinator', 1, $preload);
$coordinator->start;
$coordinator->safe_psql('postgres', 'CREATE DATABASE snowflake_registry');
my @workers;
for my $i (1, 2)
{
	push @workers, registry_node("worker$i",
		'host=' . $coordinator->host . ' port=' . $coordinator->port . ' dbname=snowflake_registry', $preload);
}
my @nodes = ($coordinator, @workers);

# the documented blocks, the docs' host names and ports the nodes'
my %where = ('coordinator' => $coordinator, 'worker-1' => $workers[0], 'worker-2' => $workers[1]);
my @blocks = readme_blocks('135_citus.pl');
for my $block (@blocks)
{
	$block =~ s/'\Q$_\E', 5432/"'" . $where{$_}->host . "', " . $where{$_}->port/ge for keys %where;
	my ($on) = $block =~ /\A-- on (.*)\n/ or die "a Citus block says not where it runs:\n$block";
	my ($db, @targets) = ('postgres');
	if ($on =~ /^the coordinator, in the database (\w+)/) { ($db, @targets) = ($1, $coordinator); }
	elsif ($on eq 'the coordinator') { @targets = ($coordinator); }
	elsif ($on eq 'every node') { @targets = @nodes; }
	else { die "unknown place: $on"; }
	my @expected = $block =~ /^-- ((?:ERROR|DETAIL):  .*)$/mg;
	for my $node (@targets)
	{
		my ($stdout, $stderr);
		$node->psql($db, $block, stdout => \$stdout, stderr => \$stderr, on_error_stop => 0);
		my @errors = $stderr =~ /((?:ERROR|DETAIL):  .*)$/mg;
		is_deeply(\@errors, \@expected, "docs block on $on (" . $node->name . "): "
			  . (@expected ? 'the documented errors only' : 'no error')) or diag($stderr);
	}
	# the workers start once their registry is made
	if ($db eq 'snowflake_registry') { $_->start for @workers; }
}

# the worker ids: 1 by hand, the workers' from the registry, all distinct
my %worker_id = map { $_->name => wait_for_worker($_) } @nodes;
is($worker_id{coordinator}, 1, 'the coordinator: worker id 1');
ok($worker_id{worker1} >= 100 && $worker_id{worker2} >= 100 && $worker_id{worker1} != $worker_id{worker2},
	"the workers: worker ids $worker_id{worker1} and $worker_id{worker2} from the registry on the coordinator");
for my $node (@nodes)
{
	is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
		$coordinator->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
		$node->name . ': CREATE EXTENSION snowflake on the coordinator created it here');
}

# writes through every node
for my $node (@nodes)
{
	$node->safe_psql('postgres',
		"INSERT INTO accounts (name) SELECT '" . $node->name . "' FROM generate_series(1, $rows_per_node)");
}
for my $node (@nodes)
{
	my ($rows, $other) = split /\|/, $coordinator->safe_psql('postgres', "
SELECT count(*), count(*) FILTER (WHERE (snowflake_decode(id)).worker_id <> $worker_id{$node->name})
FROM accounts WHERE name = '" . $node->name . "'");
	is($rows, $rows_per_node, $node->name . ": $rows rows written through it");
	is($other, 0, $node->name . ": each under its worker id $worker_id{$node->name}");
}
my ($ids, $distinct) = split /\|/, $coordinator->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM accounts');
is($distinct, $ids, "$ids ids through three nodes, 0 duplicates");
my $citus = $coordinator->safe_psql('postgres', q{SELECT split_part(citus_version(), ' ', 2) || ' on PostgreSQL ' || split_part(current_setting('server_version'), ' ', 1)});
diag("Citus $citus: $ids ids written through the coordinator and two workers, " . ($ids - $distinct) . ' duplicates');

# a lookup by id: one shard
my $id = $coordinator->safe_psql('postgres', "SELECT id FROM accounts WHERE name = 'worker2' LIMIT 1");
for my $node ($coordinator, $workers[0])
{
	my $plan = $node->safe_psql('postgres', "EXPLAIN SELECT * FROM accounts WHERE id = $id");
	like($plan, qr/Task Count: 1\b/, 'a lookup by id through ' . $node->name . ': routed to one shard') or diag($plan);
}
is($coordinator->safe_psql('postgres', "SELECT name FROM accounts WHERE id = $id"), 'worker2', 'the lookup finds the row');

# time partitions: rows this month and last month; a range of this month prunes last month's
$coordinator->safe_psql('postgres', q{
INSERT INTO events (account_id, payload) SELECT id, 'now' FROM accounts LIMIT 300;
INSERT INTO events (id, account_id, payload)
SELECT snowflake_from_timestamp(date_trunc('month', now()) - interval '10 days') + n, a.id, 'last month'
FROM (SELECT id, row_number() OVER () AS n FROM accounts LIMIT 300) AS a;
});
my $this_month = $coordinator->safe_psql('postgres', q{SELECT 'events_' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMM')});
my $last_month = $coordinator->safe_psql('postgres',
	q{SELECT 'events_' || to_char((date_trunc('month', now() AT TIME ZONE 'UTC') - interval '10 days'), 'YYYYMM')});
my $range = q{id >= snowflake_from_timestamp(date_trunc('month', now())) AND id < snowflake_from_timestamp(now() + interval '1 minute')};
is($coordinator->safe_psql('postgres', "SELECT count(*) FROM events WHERE $range"), 300, "the range finds this month's 300 rows");
my $plan = $coordinator->safe_psql('postgres', "SET citus.explain_all_tasks = on; EXPLAIN SELECT count(*) FROM events WHERE $range");
like($plan, qr/Subplans Removed: [1-9]/, 'a time range: partitions pruned on the workers') or diag($plan);
like($plan, qr/\Q$this_month\E_\d+/, "... this month's partition ($this_month) scanned");
unlike($plan, qr/\Q$last_month\E_\d+/, "... last month's ($last_month) not");
my $tasks = () = $plan =~ /-> +Task\b/g;
ok($tasks > 1, "... on every shard ($tasks tasks)");

$_->stop for reverse @nodes;
done_testing();
