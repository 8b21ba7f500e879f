# Worker ids claimed from a registry (snowflake.registry): a registry on a
# server of its own grants each node a worker id with a window of id times
# that never overlaps another grant of it, and the node refuses ids at or past
# the window's end. Nodes here: 6 s windows renewed every 500 ms.
#   6. clocks skewed (libfaketime): claims beyond snowflake.registry_max_skew refused
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;
use RegistryTest;

my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[0,1024)', '10 min');

# ---------------------------------------------------------------------------
# 6. clock skew: claims beyond snowflake.registry_max_skew (2 s here) refused
my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
SKIP:
{
	skip "libfaketime is not installed ($libfaketime)", 6 unless -e $libfaketime;
	my %skewed;
	for my $case ([ 'half', '+1' ], [ 'twice', '+4' ], [ 'ten_min', '+600' ])
	{
		my ($name, $offset) = @$case;    # seconds ahead
		my $n = registry_node("skew_$name", $conninfo, "snowflake.registry_max_skew = '2s'\n");
		local $ENV{LD_PRELOAD}                   = $libfaketime;
		local $ENV{FAKETIME}                     = $offset;
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
		$n->start;
		$skewed{$name} = $n;
	}
	my $half = $skewed{half};
	$half->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	my $worker = wait_for_worker($half);
	ok(defined $worker, "a clock 1 s ahead (half the bound): worker id $worker claimed");
	for my $name ('twice', 'ten_min')
	{
		my $n = $skewed{$name};
		$n->safe_psql('postgres', 'CREATE EXTENSION snowflake');
		$n->poll_query_until('postgres', "SELECT registry_error LIKE 'the registry''s clock is % ms behind this server''s%' FROM snowflake_status")
		  or die "$name: no skew reported";
		my $ahead = $name eq 'twice' ? '4 s (twice the bound)' : '10 min';
		is(status($n, 'worker_id'), '', "a clock $ahead ahead: no worker id claimed");
		my ($out, $err);
		$n->psql('postgres', 'SELECT snowflake_nextval()', stdout => \$out, stderr => \$err);
		like($err, qr/snowflake has no worker id.*more than snowflake\.registry_max_skew \(2000 ms\)/s,
			"a clock $ahead ahead: generation refused, saying why");
	}
	# the skewed node and an unskewed one: ids of both, none shared
	my $plain = registry_node('plain', $conninfo);
	$plain->start;
	$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	wait_for_worker($plain);
	my %seen;
	my $duplicates = 0;
	for my $n ($half, $plain)
	{
		$seen{$_}++ and $duplicates++ for split /\n/, $n->safe_psql('postgres', 'SELECT snowflake_nextvals(5000)');
	}
	is($duplicates, 0, 'a node 1 s ahead and one on time: 0 duplicates in 10,000 ids');
	ok(!$skewed{twice}->log_contains(qr/claimed from the registry/), 'the node twice the bound ahead claimed nothing');
	$_->stop for values %skewed, $plain;
}

$registry->stop;
done_testing();
