# Eight copies of one data directory under a registry (snowflake.registry),
# started together and loaded with pgbench: the source, two base backups
# started as primaries, two streaming standbys promoted, two copies of the
# stopped source (cp -a) and a copy of one of those. The lease file of every
# copy names the source's worker id; none of them may use it: each claims a
# worker id of its own, because the right to one is the registry's grant to a
# running server (its incarnation, made at start and never on disk).
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

# The registry made by the README's block, as printed.
my ($create, $operations) = readme_blocks('121_registry_copies.pl');
my $registry = registry_server('registry');
$registry->safe_psql('postgres', 'CREATE DATABASE fleet');
$registry->safe_psql('fleet', $create);
my $conninfo = registry_conninfo($registry, 'fleet');

my $source = registry_node('n1', $conninfo, undef, allows_streaming => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval())');
my $source_worker = wait_for_worker($source);
$source->safe_psql('postgres', 'INSERT INTO t SELECT snowflake_nextvals(1000)');
$source->backup('base');

my @copies;
for my $name ('base1', 'base2')    # base backups, started as primaries
{
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($source, 'base');
	push @copies, $copy;
}
for my $name ('standby1', 'standby2')    # streaming standbys, promoted below
{
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init_from_backup($source, 'base', has_streaming => 1);
	$copy->start;
	wait_for_worker($copy);
	push @copies, $copy;
}
$source->safe_psql('postgres', 'INSERT INTO t SELECT snowflake_nextvals(1000)');
$source->wait_for_catchup($_) for @copies[ 2, 3 ];
$_->promote for @copies[ 2, 3 ];

# Copies of the stopped source, and a copy of such a copy.
sub cold_copy
{
	my ($name, $from) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init;    # a node of its own (port, socket), its directory then replaced
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $copy->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $from->data_dir, $copy->data_dir);
	$copy->append_conf('postgresql.conf', "port = " . $copy->port . "\nunix_socket_directories = '" . $copy->host . "'\n");
	return $copy;
}
$source->stop;
my $cold1 = cold_copy('cold1', $source);
my $cold2 = cold_copy('cold2', $source);
my $cold3 = cold_copy('cold_of_cold', $cold1);
push @copies, $cold1, $cold2, $cold3;
like(read_lease($_)->{worker_id}, qr/^$source_worker$/, $_->name . ": its lease file names the source's worker id $source_worker")
  for $cold1, $cold3;

my @nodes = ($source, @copies);
$_->start for $source, @copies[ 0, 1, 4, 5, 6 ];
my %worker;
$worker{ $_->name } = wait_for_worker($_) for @nodes;
is($worker{n1}, $source_worker, 'the source, restarted after a clean shutdown, has its worker id back');
# the rows each node has from before the load (the source's, in every copy)
my %before = map { $_->name => $_->safe_psql('postgres', 'SELECT max(id) FROM t') } @nodes;

# All eight under pgbench at once: one client each, 4 s.
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
append_to_file($script, "INSERT INTO t DEFAULT VALUES;\n");
my @runs;
for my $node (@nodes)
{
	my ($out, $err) = ('', '');
	push @runs, [ $node, IPC::Run::start([ 'pgbench', '-n', '-f', $script, '-T', '4', '-c', '1',
		'-h', $node->host, '-p', $node->port, 'postgres' ], '>', \$out, '2>', \$err), \$err ];
}
for (@runs)
{
	my ($node, $run, $err) = @$_;
	ok($run->finish, $node->name . ': pgbench inserted without an error') or diag $$err;
}

my %seen;
my ($total, $duplicates) = (0, 0);
for my $node (@nodes)
{
	for my $id (split /\n/, $node->safe_psql('postgres', "SELECT id FROM t WHERE id > $before{$node->name}"))
	{
		$total++;
		$duplicates++ if $seen{$id}++;
	}
}
is($duplicates, 0, "8 copies of one data directory under pgbench: 0 duplicates in the $total ids they made");
my %distinct = map { $_ => 1 } values %worker;
is(scalar keys %distinct, 8, '8 distinct worker ids: ' . join(', ', map { "$_ $worker{$_}" } sort keys %worker));
is($registry->safe_psql('fleet', "SELECT count(*) FROM snowflake_registry.claims WHERE state = 'held'"),
	8, 'the registry holds 8 grants');
for my $node (@nodes)
{
	is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE id > $before{$node->name} AND (snowflake_decode(id)).worker_id <> $worker{$node->name}"),
		0, $node->name . ": every id it made is under its own worker id");
}
# The registry's history explains every id of every node (the ids made
# during the load, gathered in one table on the registry's server).
$registry->safe_psql('fleet', 'CREATE TABLE events (id bigint)');
for my $node (@nodes)
{
	$registry->safe_psql('fleet', 'INSERT INTO events VALUES ' . join(',', map { "($_)" }
		split /\n/, $node->safe_psql('postgres', "SELECT id FROM t WHERE id > $before{$node->name}")));
}
is($registry->safe_psql('fleet', "SELECT count(*), sum(ids), sum(outside_windows) FROM snowflake_registry_check('events')"),
	"8|$total|0", 'snowflake_registry_check: 8 worker ids, every id inside a window granted to its worker id');
$registry->safe_psql('fleet', 'INSERT INTO events VALUES (1)');    # worker id 0, at the epoch
is($registry->safe_psql('fleet', "SELECT outside_windows FROM snowflake_registry_check('events') WHERE worker_id = 0"),
	1, 'snowflake_registry_check: an id outside every window is counted');

# The README's operations, as printed.
my $printed = $registry->safe_psql('fleet', $operations);
like($printed, qr/^held\|8$/m, 'the README\'s operations run as printed: 8 worker ids held');
like($printed, qr/^0\|\d+\|1\|2024-01-01 00:00:00\+00\|/m, 'and the check shows the id outside every window');
is($registry->safe_psql('fleet', 'SELECT to_timestamp(floor_ms / 1000.0) > now() + interval \'9 min\' FROM snowflake_registry.settings'),
	't', 'the floor raised');

$_->stop for @nodes;
$registry->stop;
done_testing();
