# Metrics: contrib/prometheus. The alert rules pass `promtool check rules`, and
# `promtool test rules` replays a registry's outage (the warnings before the
# window's end, the page once ids stopped) and grace waits (no page while they
# last) through every alert; Debian's prometheus-postgres-exporter, given the
# queries file and a pg_monitor role let in by the pg_hba.conf line of
# docs/integrations.md (peer, mapped), serves snowflake_status with the node's
# values: the window the registry granted (not the node's setting), and the
# time left of a registry's grace while a claim waits for it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
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
# the node asks for 10 s windows, the registry grants its maximum, 6 s
my $node = registry_node('node', $conninfo, "snowflake.registry_window = '10s'\nlog_connections = on\n");
# the exporter's role, let in as docs/integrations.md says: peer, the OS user the
# exporter runs as mapped to it (here the test's own), above initdb's lines
my $os_user = getpwuid($>);
my $hba = $node->data_dir . '/pg_hba.conf';
my $hba_lines = slurp_file($hba);
open my $fh, '>', $hba or die "$hba: $!";
print $fh "local postgres metrics peer map=exporter\n", $hba_lines;
close $fh;
$node->append_conf('pg_ident.conf', "exporter $os_user metrics\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $worker_id = wait_for_worker($node);
$node->safe_psql('postgres', q{
CREATE ROLE metrics LOGIN IN ROLE pg_monitor;
SELECT snowflake_nextvals(20000);
});

my ($run, $scrape) = start_exporter($node, $exporter, "$dir/snowflake-queries.yaml");
sub scrape { return $scrape->(); }

my $metrics = scrape();
my %node = split /\|/, $node->safe_psql('postgres', q{
SELECT 'lead_ms|' || lead_ms || '|clock_regressions|' || clock_regressions || '|waits|' || waits
    || '|lease_extensions|' || lease_extensions FROM snowflake_status});
is($metrics->{pg_exporter_last_scrape_error}, 0, 'the scrape as a pg_monitor role has no error');
like(slurp_file($node->logfile), qr/connection authenticated: identity="\Q$os_user\E" method=peer \(\Q$hba\E:1\)/,
	"the exporter let in by the first line of pg_hba.conf: peer, $os_user mapped to metrics");
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
# until - reached: the window granted, less the answer's way back
ok($metrics->{snowflake_status_window_seconds} > 5 && $metrics->{snowflake_status_window_seconds} <= 6,
	"window_seconds: $metrics->{snowflake_status_window_seconds}, the window the registry granted (6 s), not the node's 10 s");
ok($metrics->{snowflake_status_window_left_seconds} > 0 && $metrics->{snowflake_status_window_left_seconds} <= 6,
	"window_left_seconds: $metrics->{snowflake_status_window_left_seconds}, within the 6 s window");
ok($metrics->{snowflake_status_registry_reached_age_seconds} >= 0
	  && $metrics->{snowflake_status_registry_reached_age_seconds} < 6,
	"registry_reached_age_seconds: $metrics->{snowflake_status_registry_reached_age_seconds}, renewed every 500 ms");
is($metrics->{snowflake_status_registry_failing}, 0, 'registry_failing: 0');
is($metrics->{snowflake_status_registry_unclaimed}, 0, 'registry_unclaimed: 0 (a worker id held)');
is($metrics->{snowflake_status_writer_stalled_seconds}, 'NaN', 'writer_stalled_seconds: NaN (the writer answers)');
is($metrics->{snowflake_status_registry_grace_left_seconds}, 'NaN', 'registry_grace_left_seconds: NaN (no grace waited for)');

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

# the window ends; the registry started again is a new life: the window is not
# reinstated, and the node's claim waits for its grace (the 10 s window the
# node asks, longer than the registry's 6 s maximum, + 1 s: R2')
$node->poll_query_until('postgres', 'SELECT NOT generating FROM snowflake_status')
  or die 'the window does not end';
$registry->start;
$node->poll_query_until('postgres',
	"SELECT registry_error LIKE 'the registry grants no new window until %' FROM snowflake_status")
  or die 'the node does not wait for the grace: '
  . $node->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status');
$deadline = time + $PostgreSQL::Test::Utils::timeout_default;
until ($metrics->{snowflake_status_registry_grace_left_seconds} ne 'NaN' || time > $deadline)
{
	usleep(100_000);
	$metrics = scrape();
}
ok($metrics->{snowflake_status_registry_grace_left_seconds} > 0
	  && $metrics->{snowflake_status_registry_grace_left_seconds} <= 11,
	"registry_grace_left_seconds while the claim waits: $metrics->{snowflake_status_registry_grace_left_seconds}, within the 11 s grace");
is($metrics->{snowflake_status_generating}, 0, 'generating: 0 meanwhile');
wait_for_worker($node);
$deadline = time + $PostgreSQL::Test::Utils::timeout_default;
until ($metrics->{snowflake_status_generating} == 1 || time > $deadline)
{
	usleep(100_000);
	$metrics = scrape();
}
is($metrics->{snowflake_status_registry_grace_left_seconds}, 'NaN', 'registry_grace_left_seconds: NaN once claimed');

$run->kill_kill;
$node->stop;
done_testing();
