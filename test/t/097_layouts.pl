# Generation in other layouts: servers started with
# snowflake.layout = 'time=41 worker=8 sequence=14', 'js53' and 'sonyflake_style'
# generate bursts above 4,096 ids a millisecond, decode them and keep them
# unique and increasing within the layout's cap (and, for js53, below 2^53);
# the worker id follows the layout: each layout's range (0 to 255, 63, 65535)
# is asserted at reload (its ends accepted, one more refused, naming the
# range) and at start; bad layouts and a restart under another layout are
# refused, naming the setting. No wait is for a log line: a wrong range fails
# at once, naming it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX ();
use SnowflakeTest;

# Starts a node; when it does not start, fails with what its log says (a
# worker id outside the layout's range names the range) and ends the test.
sub start_node
{
	my ($node, $label) = @_;
	my $offset = -s $node->logfile // 0;
	return if $node->start(fail_ok => 1);
	fail("$label: the server starts");
	diag(join("\n", grep { /FATAL|DETAIL/ } split /\n/, slurp_file($node->logfile, $offset)));
	die "$label: the server did not start\n";
}

# The worker ids of a layout with $bits worker bits are 0 to $max: at reload
# both ends are accepted and $max + 1 is refused, the log naming the range
# (above 65535, PostgreSQL's own range check, with no detail), and the worker
# id before stays. The node runs with worker id $current, and does again after.
sub worker_range_checks
{
	my ($node, $label, $bits, $max, $current) = @_;
	my $above = $max + 1;
	my $offset = -s $node->logfile;
	$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', $above);
	reload_and_wait($node);
	my $detail = $max < 65535 ? qr/\n.*DETAIL:  The worker ids of "snowflake\.layout", with $bits worker bits, are 0 to $max\./ : qr//;
	like(slurp_file($node->logfile, $offset),
		qr/$above is outside the valid range for parameter "snowflake\.worker_id" \(-1 \.\. $max\)$detail/,
		"$label: worker id $above at reload: refused, the log names the range 0 to $max");
	is($node->safe_psql('postgres', 'SHOW snowflake.worker_id'), $current,
		"$label: worker id $above at reload: $current stays");
	my %seen;
	for my $worker_id (grep { !$seen{$_}++ } 0, $max, $current)
	{
		$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', $worker_id);
		reload_and_wait($node);
		is($node->safe_psql('postgres', 'SHOW snowflake.worker_id'), $worker_id,
			"$label: worker id $worker_id (of 0 to $max) at reload: accepted");
	}
	return;
}

# A burst of ids: two pgbench clients, each inserting 10,000 rows a
# statement, 60,000 in all; n records each row's place in its client's order.
# The checks that hold in every layout.
sub burst_checks
{
	my ($node, $label, $worker_id, $per_unit_cap, $unit_ms) = @_;
	$node->safe_psql('postgres', q{
CREATE EXTENSION IF NOT EXISTS snowflake;
DROP TABLE IF EXISTS burst;
CREATE TABLE burst (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), client int, n bigint);
});
	$node->pgbench(
		'--no-vacuum --client=2 --jobs=2 --transactions=6 --define=t=0',
		0,
		[qr{actually processed: 12/12}],
		[qr{^(?!.*(ERROR|abort))}s],
		"$label: two clients insert 120,000 ids",
		{
			'097_burst.sql' => q{
\set t :t + 1
INSERT INTO burst (client, n) SELECT :client_id, :t * 100000 + g FROM generate_series(1, 10000) g;
}
		});
	is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM burst'),
		'120000|120000', "$label: 120,000 ids, all distinct");
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM (SELECT id < lead(id) OVER (PARTITION BY client ORDER BY n) AS up FROM burst) s WHERE NOT up}),
		'0', "$label: each client's ids increase in the order it made them");
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM burst WHERE (snowflake_decode(id)).worker_id <> $worker_id}),
		'0', "$label: every id decodes to worker $worker_id");
	is($node->safe_psql('postgres', q{
SELECT bool_and(snowflake_to_timestamp(id) BETWEEN now() - interval '5 min' AND clock_timestamp() + interval '5 s')
  FROM burst}),
		't', "$label: every id decodes to about now");
	cmp_ok($node->safe_psql('postgres', q{
SELECT max(n) FROM (SELECT count(*) AS n FROM burst GROUP BY snowflake_to_timestamp(id)) per_unit}),
		'<=', $per_unit_cap, "$label: at most $per_unit_cap ids in any time unit");
	# one call reserves 100,000 ids at once: they fill each time unit to the cap
	is($node->safe_psql('postgres', q{
SELECT max(n), count(DISTINCT ts) > 1 FROM (SELECT snowflake_to_timestamp(id) AS ts, count(*) AS n
                                               FROM snowflake_nextvals(100000) id GROUP BY 1) per_unit}),
		"$per_unit_cap|t", "$label: snowflake_nextvals(100000) fills time units to the cap, $per_unit_cap ids");
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM burst
 WHERE NOT (snowflake_from_timestamp(snowflake_to_timestamp(id)) <= id
            AND id < snowflake_from_timestamp(snowflake_to_timestamp(id) + interval '$unit_ms ms'))}),
		'0', "$label: every id is within the ids of its time unit (snowflake_from_timestamp)");
}

# 41/8/14: 256 workers, 16,384 ids a millisecond each (the default layout: 4,096).
my $node = snowflake_node('wide', 255, "snowflake.layout = 'time=41 worker=8 sequence=14'\n");
start_node($node, '41/8/14 with worker id 255');
burst_checks($node, '41/8/14', 255, 16384, 1);
is($node->safe_psql('postgres', 'SELECT layout FROM snowflake_status'), 'time=41 worker=8 sequence=14',
	'41/8/14: snowflake_status shows the layout');
is($node->safe_psql('postgres',
		"SELECT snowflake_id_span('1 hour') = 3600000::bigint << 22, snowflake_from_timestamp(snowflake_to_timestamp(0) + interval '1 ms')"),
	't|4194304', '41/8/14: 22 low bits, as the default layout: the id spans are the same');
my $id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($node->safe_psql('postgres',
		"SELECT (d.ts, d.worker_id, d.sequence) = (a.ts, a.worker_id, a.sequence) FROM snowflake_decode($id) d, "
		  . "snowflake_decode_as($id, 'epoch=2024-01-01 time=41 worker=8 sequence=14') a"),
	't', '41/8/14: snowflake_decode reads the layout as snowflake_decode_as does');

is($node->safe_psql('postgres',
		"SELECT (d.ts, d.worker_id, d.sequence) = (i.ts, i.worker_id, i.sequence) "
		  . "AND snowflake_to_timestamp($id, '2024-01-01+00', 'time=41 worker=8 sequence=14') = d.ts "
		  . "AND snowflake_from_timestamp(d.ts, '2024-01-01+00', 'time=41 worker=8 sequence=14') = snowflake_from_timestamp(d.ts) "
		  . "FROM snowflake_decode($id) d, snowflake_decode($id, '2024-01-01+00', 'time=41 worker=8 sequence=14') i"),
	't', '41/8/14: the IMMUTABLE forms given the layout decode as the STABLE ones');
# The forms given an epoch and no layout decode the default layout: here they
# refuse (55000), naming the form with the layout, rather than decode wrongly.
for my $form ([ 'snowflake_decode', "$id" ], [ 'snowflake_to_timestamp', "$id" ],
	[ 'snowflake_from_timestamp', "now()" ])
{
	my ($function, $argument) = @$form;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $function($argument, '2024-01-01+00')");
	my $first = $function eq 'snowflake_from_timestamp' ? 'ts' : 'id';
	like($err,
		qr/ERROR:  55000: \Q$function($first, epoch) decodes the default layout, but "snowflake.layout" is "time=41 worker=8 sequence=14"\E.*HINT:  \QName the layout after the epoch, as in $function($first, epoch, 'time=41 worker=8 sequence=14').\E/s,
		"41/8/14: $function(…, epoch) refuses (55000), naming the form with the layout");
}
my ($rc0, $out0, $err0) = $node->psql('postgres', "SELECT * FROM snowflake_partition_bounds(now(), 'day', '2024-01-01+00')");
like($err0, qr/decodes the default layout/, '41/8/14: snowflake_partition_bounds(ts, unit, epoch) refuses');
is($node->safe_psql('postgres', q{
SELECT (b.from_id, b.to_id) = (s.from_id, s.to_id)
  FROM snowflake_partition_bounds(now(), 'month', '2024-01-01+00', 'time=41 worker=8 sequence=14') b,
       snowflake_partition_bounds(now(), 'month') s}),
	't', '41/8/14: snowflake_partition_bounds given the layout: the bounds of the STABLE form');

is(read_lease($node)->{layout}, 'time=41 worker=8 sequence=14', '41/8/14: the lease file records the layout');

# The worker id follows the layout: 0 to 255 under 8 bits (at reload the old
# value stays, with the error in the log; at start the server refuses).
worker_range_checks($node, '41/8/14', 8, 255, 255);
$node->stop;
$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', '256');
my $offset = -s $node->logfile;
my $started = $node->start(fail_ok => 1);
ok(!$started, '41/8/14: worker id 256 at start: the server does not start');
$node->stop if $started;
like(slurp_file($node->logfile, $offset), qr/"snowflake\.worker_id" \(-1 \.\. 255\)/,
	'41/8/14: worker id 256 at start: the log gives the range');
$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', '255');

# Another layout on a node that has issued ids: refused, naming both, until
# the old one is back; decoding under the new setting refuses too.
$node->adjust_conf('postgresql.conf', 'snowflake.layout', "'time=41 worker=10 sequence=12'");
start_node($node, 'the default layout with worker id 255');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT snowflake_nextval()');
like($err,
	qr/parameter "snowflake\.layout" changed from "time=41 worker=8 sequence=14" to "time=41 worker=10 sequence=12".*HINT:  Set snowflake\.layout = 'time=41 worker=8 sequence=14' again/s,
	'another layout at restart: generation refuses, naming both and the way out');
($rc, $out, $err) = $node->psql('postgres', "SELECT snowflake_to_timestamp($id)");
like($err, qr/parameter "snowflake\.layout" changed .*HINT:  Decode with the layout of this node's ids, as in snowflake_decode_as\(id, 'epoch=\d+ time=41 worker=8 sequence=14'\)/s,
	'another layout at restart: decoding refuses, naming the layout to decode with');
$node->stop;
$node->adjust_conf('postgresql.conf', 'snowflake.layout', "'time=41 worker=8 sequence=14'");
start_node($node, '41/8/14 again');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $id,
	'the layout restored: generation continues above the ids before');
$node->stop;

# Bad layouts: the server does not start, and the log names the setting and the problem.
for my $case (
	[ 'time=41 worker=10 sequence=13', qr/more than 63 bits/ ],
	[ 'time=41 worker=17 sequence=5',  qr/Worker is 1 to 16 bits/ ],
	[ 'unit=0ms time=41 worker=10 sequence=12', qr/Unit is 1ms to 86400000ms|Unit is 1ms to 1000ms/ ],
	[ 'tweeter', qr/Unknown layout name/ ])
{
	my ($layout, $problem) = @$case;
	$node->adjust_conf('postgresql.conf', 'snowflake.layout', "'$layout'");
	$offset = -s $node->logfile;
	$started = $node->start(fail_ok => 1);
	ok(!$started, "snowflake.layout = '$layout': the server does not start");
	$node->stop if $started;
	like(slurp_file($node->logfile, $offset),
		qr/invalid value for parameter "snowflake\.layout": "\Q$layout\E"\n[^\n]*DETAIL:  [^\n]*$problem/,
		"snowflake.layout = '$layout': the log names the setting and what is wrong");
}

# js53: every id below 2^53, 64 worker ids, 64 ids a millisecond each.
my $js = snowflake_node('js53', 63, "snowflake.layout = 'js53'\n");
start_node($js, 'js53 with worker id 63');
burst_checks($js, 'js53', 63, 64, 1);
worker_range_checks($js, 'js53', 6, 63, 63);
is($js->safe_psql('postgres', 'SELECT max(id) < 2::bigint ^ 53 FROM burst'), 't', 'js53: max(id) < 2^53');
is($js->safe_psql('postgres', q{SELECT max(id) < 2::numeric ^ 53 FROM (SELECT snowflake_from_timestamp('2093-09-06+00') AS id) s}),
	't', 'js53: the ids of 2093 (69 years from the epoch) are still below 2^53');
is($js->safe_psql('postgres', 'SELECT layout FROM snowflake_status'), 'time=41 worker=6 sequence=6',
	'js53: snowflake_status shows the layout');
is($js->safe_psql('postgres', "SELECT snowflake_id_span('1 day')"), 86400000 << 12,
	'js53: an id span is ms << 12');
is($js->safe_psql('postgres', q{
SELECT from_id = snowflake_from_timestamp(from_ts) AND to_id = snowflake_from_timestamp(to_ts) AND to_id - from_id = 86400000::bigint << 12
  FROM snowflake_partition_bounds(now(), 'day')}),
	't', 'js53: snowflake_partition_bounds gives the ids of the day in the layout');
($rc, $out, $err) = $js->psql('postgres', 'SELECT snowflake_to_timestamp(9007199254740992)');
like($err, qr/snowflake id 9007199254740992 has bits above the 53 bits of "snowflake\.layout"/,
	'js53: decoding 2^53 is refused');
$js->stop;

# "sonyflake" is Sonyflake's layout with its epoch: under another epoch the
# server does not start, naming sonyflake_style (its fields); under 2014-09-01
# it starts, its ids decoding as snowflake_decode_as's "sonyflake".
my $sony = snowflake_node('sonyflake', 65535, "snowflake.layout = 'sonyflake'\n");
$offset = -s $sony->logfile // 0;
$started = $sony->start(fail_ok => 1);
ok(!$started, "snowflake.layout = 'sonyflake' under the 2024 epoch: the server does not start");
$sony->stop if $started;
like(slurp_file($sony->logfile, $offset),
	qr/invalid value for parameter "snowflake\.layout": "sonyflake"\n[^\n]*DETAIL:  "sonyflake" is Sonyflake's layout with its epoch, 2014-09-01; its fields under another epoch are sonyflake_style\./,
	"snowflake.layout = 'sonyflake' under the 2024 epoch: the log names sonyflake_style");
$sony->append_conf('postgresql.conf', "snowflake.epoch = '2014-09-01 00:00:00+00'\n");
start_node($sony, "sonyflake under Sonyflake's epoch");
$sony->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$id = $sony->safe_psql('postgres', 'SELECT snowflake_nextval()');
is($sony->safe_psql('postgres',
		"SELECT (d.ts, d.worker_id, d.sequence) = (a.ts, a.worker_id, a.sequence) FROM snowflake_decode($id) d, "
		  . "snowflake_decode_as($id, 'sonyflake') a"),
	't', "sonyflake under Sonyflake's epoch: its ids decode as snowflake_decode_as's sonyflake");
$sony->stop;

# Sonyflake-style: 10 ms units, the sequence above a 16-bit worker.
$sony = snowflake_node('sonyflake_style', 65535, "snowflake.layout = 'sonyflake_style'\n");
start_node($sony, 'sonyflake_style with worker id 65535');
burst_checks($sony, 'sonyflake_style', 65535, 256, 10);

# A backend waiting for the clock sleeps: with snowflake.max_lead = 0, 60,000
# ids of 256 per 10 ms take about 2.3 s, and the backend's CPU time
# (/proc/self/stat: utime + stime) stays well under that (1.1 added layout
# units to milliseconds and spun through every wait: 2.33 s of CPU in 2.34 s).
$sony->append_conf('postgresql.conf', "snowflake.max_lead = 0\n");
reload_and_wait($sony);
my ($cpu_ticks, $wall_ms) = split /\|/, (split /\n/, $sony->safe_psql('postgres', q{
CREATE TEMP TABLE probe AS SELECT pg_read_file('/proc/self/stat') AS stat, clock_timestamp() AS at;
SELECT count(*) FROM snowflake_nextvals(60000);
INSERT INTO probe SELECT pg_read_file('/proc/self/stat'), clock_timestamp();
SELECT sum(sign * (split_part(stat, ' ', 14)::bigint + split_part(stat, ' ', 15)::bigint)),
       round(extract(epoch FROM max(at) - min(at)) * 1000)
  FROM (SELECT stat, at, CASE WHEN at = max(at) OVER () THEN 1 ELSE -1 END AS sign FROM probe) p;}))[-1];
my $cpu_ms = $cpu_ticks * 1000 / POSIX::sysconf(POSIX::_SC_CLK_TCK());
cmp_ok($wall_ms, '>=', 2000, "sonyflake_style, max_lead 0: 60,000 ids wait for the clock ($wall_ms ms)");
cmp_ok($cpu_ms, '<', $wall_ms / 4, "sonyflake_style, max_lead 0: the waiting backend sleeps ($cpu_ms ms of CPU in $wall_ms ms)");
$sony->adjust_conf('postgresql.conf', 'snowflake.max_lead', '1000');
reload_and_wait($sony);
worker_range_checks($sony, 'sonyflake_style', 16, 65535, 65535);
is($sony->safe_psql('postgres', q{
SELECT bool_and(extract(milliseconds FROM snowflake_to_timestamp(id))::numeric % 10 = 0) FROM burst}),
	't', 'sonyflake: times are whole 10 ms units');
is($sony->safe_psql('postgres', 'SELECT layout FROM snowflake_status'), 'unit=10ms time=39 sequence=8 worker=16',
	'sonyflake: snowflake_status shows the layout');
$id = $sony->safe_psql('postgres', 'SELECT max(id) FROM burst');
is($sony->safe_psql('postgres',
		"SELECT (d.ts, d.worker_id, d.sequence) = (a.ts, a.worker_id, a.sequence) FROM snowflake_decode($id) d, "
		  . "snowflake_decode_as($id, 'epoch=2024-01-01 unit=10ms time=39 sequence=8 worker=16') a"),
	't', 'sonyflake: snowflake_decode reads the layout as snowflake_decode_as does');
$sony->stop;

done_testing();
