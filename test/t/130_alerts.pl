# Alerts as measured (contrib/prometheus/snowflake-alerts.yaml): a new node
# started while its registry is down, then the registry's failover: silent
# for a minute, then a new life whose grace period makes the claim wait. The
# node asks 30 s windows (the registry's maximum) renewed every 30 s: a failed
# claim is retried every 5 s, as with the defaults (90 s windows). Scraped
# through Debian's prometheus-postgres-exporter every 5 s, it shows what
# snowflake-alerts-test.yaml's cases assume: while it has never reached the
# registry, registry_reached is NULL in snowflake_status and
# registry_reached_age_seconds counts from the server's start (before: NaN,
# which no rule fires on); it sees the new life within a retry and a call
# (10 s) of the registry's start, waits the grace (the 30 s window + the 1 s
# skew bound) with registry_grace_left_seconds above 0 at every scrape, and
# claims within 10 s of the grace's end. The series scraped are then replayed
# through the alert rules (promtool test rules): the warning fires during
# the silence, no critical alert at any time, nothing once the node claimed.
# prove: sequential (measures latency)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => 'promtool and prometheus-postgres-exporter are not installed'
  unless -x $exporter && system('promtool --version >/dev/null 2>&1') == 0;

my $dir = ($ENV{TESTDIR} // '.') . '/contrib/prometheus';
my $silence_s = 60;    # the registry's failover: how long it does not answer
my $scrape_s = 5;

my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[40,50)', '1s', '30s');
my $node = registry_node('node', $conninfo, "snowflake.registry_window = '30s'\nsnowflake.registry_renew = '30s'\n");
$registry->stop;
my $stopped = time;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE ROLE metrics LOGIN IN ROLE pg_monitor');

my ($run, $scrape) = start_exporter($node, $exporter, "$dir/snowflake-queries.yaml");
# a scrape: { snowflake_status_ metric name without its prefix => value }
sub scrape
{
	my $metrics = $scrape->();
	return { map { /^snowflake_status_(\w+)$/ ? ($1 => $metrics->{$_}) : () } keys %$metrics };
}

# 1. never reached: the registry's age counted from the server's start
my $first = scrape();
my $since_start = $node->safe_psql('postgres',
	'SELECT extract(epoch FROM clock_timestamp() - pg_postmaster_start_time()) FROM snowflake_status WHERE registry_reached IS NULL');
isnt($since_start, '', 'a node that never reached its registry: registry_reached is NULL in snowflake_status');
ok($first->{registry_reached_age_seconds} ne 'NaN'
	  && $first->{registry_reached_age_seconds} <= $since_start
	  && $first->{registry_reached_age_seconds} > $since_start - 1,
	"registry_reached_age_seconds: $first->{registry_reached_age_seconds}, the time since the server's start ($since_start s a moment later)");
is($first->{registry_unclaimed}, 1, 'registry_unclaimed: 1');
is($first->{registry_grace_left_seconds}, 'NaN', 'registry_grace_left_seconds: NaN (no grace waited for)');
is($first->{window_seconds}, 'NaN', 'window_seconds: NaN (no window)');

# 2. every 5 s through the silence, the new life's grace and the claim; the
# registry's status polled in between for the times things change
my ($started, $grace_seen, $claimed);
my @samples;
my $next_scrape = time;
my $deadline = time + $silence_s + 2 * $PostgreSQL::Test::Utils::timeout_default;
while (time < $deadline)
{
	if (time >= $next_scrape)
	{
		push @samples, { at => time, %{ scrape() } };
		$next_scrape += $scrape_s;
		last if defined $claimed && $samples[-1]{generating} == 1 && @samples >= 3
		  && $samples[-2]{at} > $claimed;
	}
	if (!defined $started && time - $stopped >= $silence_s)
	{
		$registry->start;
		$started = time;
	}
	my ($error, $worker_id) = split /\|/,
	  $node->safe_psql('postgres', "SELECT coalesce(registry_error, '') || '|' || coalesce(worker_id::text, '') FROM snowflake_status");
	$grace_seen //= time if defined $started && $error =~ /^the registry grants no new window until /;
	$claimed //= time if $worker_id ne '';
	usleep(100_000);
}
ok(defined $claimed, 'the node claims a worker id after the failover') or BAIL_OUT('no claim: ' . $node->logfile);
my ($grace_until_ms, $life_began_ms) = split /\|/,
  $registry->safe_psql('fleet', 'SELECT grace_until_ms, life_began_ms FROM snowflake_registry.settings');
my $grace_until = $grace_until_ms / 1000;

my @silent = grep { $_->{at} < $started } @samples;
my @growing = grep { $_ > 0 && $silent[$_]{registry_reached_age_seconds} > $silent[ $_ - 1 ]{registry_reached_age_seconds} } 0 .. $#silent;
is(scalar @growing, $#silent, sprintf('registry_reached_age_seconds grows at each scrape of the silence: %s',
		join(' ', map { $_->{registry_reached_age_seconds} } @silent)));
is(scalar(grep { $_->{registry_unclaimed} == 1 && $_->{generating} == 0 && $_->{registry_grace_left_seconds} eq 'NaN' } @silent),
	scalar @silent, 'meanwhile registry_unclaimed 1, generating 0, no grace');
ok(defined $grace_seen && $grace_seen >= $started && $grace_seen - $started <= 10,
	sprintf('the new life met %.1f s after the registry started: within a retry (5 s) and a call (5 s)',
		$grace_seen - $started));
ok($grace_seen - $stopped <= $silence_s + 10,
	sprintf('the claim unanswered for %.1f s of a %d s silence', $grace_seen - $stopped, $silence_s));
cmp_ok($grace_until_ms - $life_began_ms, '<=', 31000,
	sprintf('the grace: %d ms from the new life, at most the 30 s window + the 1 s skew bound', $grace_until_ms - $life_began_ms));
# until the claim, a number at each scrape: above 0 during the grace, then
# what is past it (the registry answered: no warning)
my @waiting = grep { $_->{at} > $grace_seen && $_->{at} < $claimed } @samples;
ok(@waiting > 0 && @waiting == grep({ $_->{registry_grace_left_seconds} ne 'NaN' && $_->{registry_grace_left_seconds} <= 31
			&& ($_->{registry_grace_left_seconds} > 0 || $_->{at} > $grace_until - 1) } @waiting),
	sprintf('registry_grace_left_seconds at each scrape of the wait: %s',
		join(' ', map { $_->{registry_grace_left_seconds} } @waiting)));
ok($claimed >= $grace_until && $claimed - $grace_until <= 10,
	sprintf('claimed %.1f s after the grace ended: within a retry (5 s) and a call (5 s)', $claimed - $grace_until));
note(sprintf('the new node waited %.1f s: %.1f s unanswered, the grace until %.1f s, claimed at %.1f s',
		$claimed - $stopped, $grace_seen - $stopped, $grace_until - $stopped, $claimed - $stopped));

# 3. the series replayed through the rules, a scrape every 5 s
my @names = qw(registry_reached_age_seconds window_seconds window_left_seconds registry_failing registry_unclaimed
  generating in_recovery registry_grace_left_seconds lead_seconds);
my $last = ($#samples) * $scrape_s;
my ($at_start) = grep { $samples[$_]{at} >= $started } 0 .. $#samples;
my $series = join '', map {
	my $name = $_;
	"      - series: 'snowflake_status_${name}{instance=\"node\"}'\n        values: '"
	  . join(' ', map { $_->{$name} // '_' } @samples) . "'\n"
} @names;
my $replay = PostgreSQL::Test::Utils::tempdir() . '/replay.yaml';
append_to_file($replay, <<"EOF");
rule_files:
  - $dir/snowflake-alerts.yaml
evaluation_interval: ${scrape_s}s
tests:
  - interval: ${scrape_s}s
    input_series:
$series    promql_expr_test:
      - expr: count_over_time(ALERTS{alertstate="firing", severity="critical"}[${\($last + $scrape_s)}s])
        eval_time: ${last}s
        exp_samples: []
      - expr: count_over_time(ALERTS{alertstate="firing", alertname="SnowflakeRegistryUnreachable"}[${\($at_start * $scrape_s)}s]) > bool 0
        eval_time: ${\($at_start * $scrape_s)}s
        exp_samples:
          - labels: '{alertname="SnowflakeRegistryUnreachable", alertstate="firing", instance="node", severity="warning"}'
            value: 1
      - expr: ALERTS{alertstate="firing"}
        eval_time: ${last}s
        exp_samples: []
EOF
my ($replayed, $replay_err) = run_command([ 'promtool', 'test', 'rules', $replay ]);
like($replayed, qr/SUCCESS/,
	'replayed through the rules: the warning during the silence, no critical alert at any time, none once claimed')
  or diag($replayed . $replay_err . slurp_file($replay));

$run->kill_kill;
$node->stop;
$registry->stop;
done_testing();
