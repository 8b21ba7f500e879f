# Metrics: contrib/prometheus. The alert rules pass `promtool check rules`, and
# `promtool test rules` fires each alert on the series that should fire it and
# on no other; Debian's prometheus-postgres-exporter, given the queries file and
# a pg_monitor role, serves snowflake_status with the node's values.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use Time::HiRes qw(usleep);
use SnowflakeTest;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => 'promtool and prometheus-postgres-exporter are not installed'
  unless -x $exporter && system('promtool --version >/dev/null 2>&1') == 0;

my $dir = ($ENV{TESTDIR} // '.') . '/contrib/prometheus';

# 1. the rules, and their unit tests
for my $command ([ 'check', 'rules', "$dir/snowflake-alerts.yaml" ], [ 'test', 'rules', "$dir/snowflake-alerts-test.yaml" ])
{
	my ($out, $err) = run_command([ 'promtool', @$command ]);
	like($out, qr/SUCCESS/, "promtool @$command[0 .. 1]") or diag($out . $err);
}
my ($rules_out) = run_command([ 'promtool', 'check', 'rules', "$dir/snowflake-alerts.yaml" ]);
like($rules_out, qr/SUCCESS: 5 rules found/, 'five alerts');

# 2. the exporter on a node that claims its worker id from a registry
my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[40,50)', '1s');
my $node = registry_node('node', $conninfo);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $worker_id = wait_for_worker($node);
$node->safe_psql('postgres', q{
CREATE ROLE metrics LOGIN IN ROLE pg_monitor;
SELECT snowflake_nextvals(20000);
});

my $port = PostgreSQL::Test::Cluster::get_free_port();
my ($out, $err) = ('', '');
local $ENV{DATA_SOURCE_NAME} =
  'host=' . $node->host . ' port=' . $node->port . ' user=metrics dbname=postgres sslmode=disable';
my $run = IPC::Run::start(
	[ $exporter, "--web.listen-address=127.0.0.1:$port", "--extend.query-path=$dir/snowflake-queries.yaml" ],
	'>', \$out, '2>', \$err);

# Scrapes /metrics until the snowflake metrics are there: { name => value }.
sub scrape
{
	my $http = HTTP::Tiny->new(timeout => 10);
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $response = $http->get("http://127.0.0.1:$port/metrics");
		if ($response->{success} && $response->{content} =~ /^snowflake_status_generating/m)
		{
			my %metrics;
			for (split /\n/, $response->{content})
			{
				$metrics{$1} = $2 if /^(snowflake_status_\w+|pg_exporter_last_scrape_error)(?:\{[^}]*\})? (\S+)$/;
			}
			return \%metrics;
		}
		usleep(100_000);
	}
	die "no snowflake metrics on 127.0.0.1:$port: $err";
}

my $metrics = scrape();
my %node = split /\|/, $node->safe_psql('postgres', q{
SELECT 'lead_ms|' || lead_ms || '|clock_regressions|' || clock_regressions || '|waits|' || waits
    || '|lease_extensions|' || lease_extensions FROM snowflake_status});
is($metrics->{pg_exporter_last_scrape_error}, 0, 'the scrape as a pg_monitor role has no error');
is($metrics->{snowflake_status_worker_id}, $worker_id, "worker_id: the node's ($worker_id)");
is($metrics->{snowflake_status_generating}, 1, 'generating: 1');
is($metrics->{snowflake_status_in_recovery}, 0, 'in_recovery: 0');
is($metrics->{snowflake_status_clock_regressions}, $node{clock_regressions}, "clock_regressions: the node's");
is($metrics->{snowflake_status_waits}, $node{waits}, "waits: the node's");
ok($metrics->{snowflake_status_lease_extensions} > 0 && $metrics->{snowflake_status_lease_extensions} <= $node{lease_extensions},
	"lease_extensions: the node's ($metrics->{snowflake_status_lease_extensions}, now $node{lease_extensions})");
# 20,000 ids in one call borrow ahead, and nothing has been issued since
ok(abs($metrics->{snowflake_status_lead_seconds} - $node{lead_ms} / 1000) < 0.1,
	"lead_seconds: $metrics->{snowflake_status_lead_seconds}, the node's ${\($node{lead_ms} / 1000)} at about that time");
is($metrics->{snowflake_status_window_seconds}, 6, 'window_seconds: snowflake.registry_window (6 s)');
ok($metrics->{snowflake_status_window_left_seconds} > 0 && $metrics->{snowflake_status_window_left_seconds} <= 6,
	"window_left_seconds: $metrics->{snowflake_status_window_left_seconds}, within the 6 s window");
ok($metrics->{snowflake_status_registry_reached_age_seconds} >= 0
	  && $metrics->{snowflake_status_registry_reached_age_seconds} < 6,
	"registry_reached_age_seconds: $metrics->{snowflake_status_registry_reached_age_seconds}, renewed every 500 ms");
is($metrics->{snowflake_status_registry_failing}, 0, 'registry_failing: 0');
is($metrics->{snowflake_status_registry_unclaimed}, 0, 'registry_unclaimed: 0 (a worker id held)');
is($metrics->{snowflake_status_writer_stalled_seconds}, 'NaN', 'writer_stalled_seconds: NaN (the writer answers)');

# the registry stopped: the node's failure and the registry's silence show
$registry->stop;
$node->poll_query_until('postgres', 'SELECT registry_error IS NOT NULL FROM snowflake_status')
  or die 'the node does not see the registry gone';
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
until ($metrics->{snowflake_status_registry_failing} == 1 || time > $deadline)
{
	usleep(100_000);
	$metrics = scrape();
}
is($metrics->{snowflake_status_registry_failing}, 1, 'registry_failing: 1 once the registry is stopped');
ok($metrics->{snowflake_status_registry_reached_age_seconds} > 0.5,
	"registry_reached_age_seconds grows: $metrics->{snowflake_status_registry_reached_age_seconds}");

$run->kill_kill;
$node->stop;
done_testing();
