# Settings and the states that refuse generation:
#  - bad values are refused when the server reads them: at start-up the server
#    does not start, at reload the old value stays; the log names the setting
#    and its range;
#  - a worker id changed at reload takes effect, ids still increase;
#  - snowflake.epoch changed on a node that issued ids: generation refuses,
#    naming both epochs, until the old one is back;
#  - a corrupt lease file: generation refuses until it is dealt with.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $node = snowflake_node('settings', 51,
	"snowflake.epoch = '2024-01-01 00:00:00+00'\nsnowflake.max_lead = 1000\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), step int NOT NULL);
});

my $step = 0;
# Inserts 100 rows; returns the smallest id and the worker ids they decode to.
sub insert_rows
{
	$step++;
	$node->safe_psql('postgres',
		"INSERT INTO t (step) SELECT $step FROM generate_series(1, 100)");
	return split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT min(id), string_agg(DISTINCT (snowflake_decode(id)).worker_id::text, ',')
FROM t WHERE step = $step});
}

sub max_id { return $node->safe_psql('postgres', 'SELECT max(id) FROM t'); }

# Runs a call that must fail; returns its stderr.
sub refused
{
	my ($sql, @options) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql('postgres', $sql, stdout => \$stdout, stderr => \$stderr, @options);
	isnt($ret, 0, "\"$sql\" fails");
	return $stderr;
}

my ($min, $workers) = insert_rows();
is($workers, '51', 'ids carry snowflake.worker_id');

# Reload with bad values: refused, logged, the old value stays.
for my $bad ([ 'snowflake.worker_id', '2000', '51', qr/1023/ ],
	[ 'snowflake.max_lead', '-5', '1s', qr/3600000/ ])
{
	my ($setting, $value, $old, $range) = @$bad;
	my $offset = -s $node->logfile;
	$node->adjust_conf('postgresql.conf', $setting, $value);
	$node->reload;
	$node->wait_for_log(qr/contains errors/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/^.*"\Q$setting\E".*$range.*$/m,
		"reload with $setting = $value: the log names the setting and its range");
	is($node->safe_psql('postgres', "SHOW $setting"),
		$old, "reload with $setting = $value: the old value stays");
}
my $before = max_id();
($min, $workers) = insert_rows();
is($workers, '51', 'after the refused reload, ids carry the old worker id');
cmp_ok($min, '>', $before, 'after the refused reload, ids increase');
$node->adjust_conf('postgresql.conf', 'snowflake.max_lead', '1000');

# A good worker id at reload: a lower one, so that ids of the same millisecond
# would go backwards if the generator did not carry on from the last id.
$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', '50');
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.worker_id') = '50'")
  or die 'snowflake.worker_id = 50 not in effect';
$before = max_id();
($min, $workers) = insert_rows();
is($workers, '50', 'a worker id changed at reload takes effect');
cmp_ok($min, '>', $before, 'after a lower worker id at reload, ids still increase');
$node->adjust_conf('postgresql.conf', 'snowflake.worker_id', '51');
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.worker_id') = '51'")
  or die 'snowflake.worker_id = 51 not in effect';
$node->stop;

# Bad values at start-up: the server does not start (a worker id of 1.5 is
# refused, not rounded to 2).
for my $bad ([ 'snowflake.worker_id', '2000', '51', qr/1023/ ],
	[ 'snowflake.worker_id', '1.5', '51', qr/whole number from 0 to 1023/ ],
	[ 'snowflake.worker_id', "'7x'", '51', qr/whole number from 0 to 1023/ ],
	[ 'snowflake.epoch', "'nonsense'", "'2024-01-01 00:00:00+00'", qr/1970.*9999/s ],
	[ 'snowflake.max_lead', '-5', '1000', qr/3600000/ ])
{
	my ($setting, $value, $good, $range) = @$bad;
	$node->adjust_conf('postgresql.conf', $setting, $value);
	my $offset  = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$setting = $value: the server does not start");
	$node->stop if $started;
	my $log = slurp_file($node->logfile, $offset);
	like($log, qr/"\Q$setting\E"/, "$setting = $value: the log names the setting");
	like($log, $range, "$setting = $value: the log gives the range");
	$node->adjust_conf('postgresql.conf', $setting, $good);
}

# A misspelt snowflake.* setting is reported at start (the prefix is reserved).
$node->append_conf('postgresql.conf', "snowflake.workerid = 3\n");
my $misspelt_offset = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/invalid configuration parameter name "snowflake\.workerid"/, $misspelt_offset),
	'a misspelt snowflake.workerid in postgresql.conf: a WARNING in the log at start');
$node->stop;
$node->adjust_conf('postgresql.conf', 'snowflake.workerid', undef);

# The epoch changed on a node that has issued ids.
$node->adjust_conf('postgresql.conf', 'snowflake.epoch', "'2023-01-01 00:00:00+00'");
$node->start;
my $error = refused('SELECT snowflake_nextval()');
like(
	$error,
	qr/parameter "snowflake\.epoch" changed from "[^"]+" to "2023-01-01 00:00:00\+00"/,
	'epoch changed: the error names the new epoch');
my ($old) = $error =~ /changed from "([^"]+)"/;
is($node->safe_psql('postgres', "SELECT '$old'::timestamptz = '2024-01-01 00:00:00+00'"),
	't', "epoch changed: the error names the old epoch ($old)");
like($error, qr/HINT:  .*snowflake\.epoch = '[^']+' again/,
	'epoch changed: the hint says how to proceed');
like(refused('SELECT count(*) FROM snowflake_nextvals(10)'),
	qr/parameter "snowflake\.epoch" changed/, 'epoch changed: snowflake_nextvals() refuses too');
is($node->safe_psql('postgres', 'SELECT generating, not_generating FROM snowflake_status'),
	'f|the lease was taken under another snowflake.epoch or snowflake.layout: set it back, or run snowflake_repair_lease() to start a new id space',
	'epoch changed: snowflake_status shows no generation, and why');
# Decoding under the setting would shift every id already issued: the STABLE
# forms refuse as generation does; the forms given the epoch still work.
for my $call ('snowflake_to_timestamp(1)', '(snowflake_decode(1)).ts',
	"snowflake_from_timestamp('2026-01-01+00')")
{
	like(refused("SELECT $call"),
		qr/parameter "snowflake\.epoch" changed from .*HINT:  Decode with the epoch of this node's ids, as in snowflake_to_timestamp\(id, '[^']+', 'time=41 worker=10 sequence=12'\)/s,
		"epoch changed: $call refuses, with the way to decode");
}
is($node->safe_psql('postgres',
		"SELECT snowflake_to_timestamp(4194304, '2024-01-01+00') = '2024-01-01 00:00:00.001+00'"),
	't', 'epoch changed: decoding with the epoch given works');
$node->stop;
is(read_lease($node)->{epoch_unix_ms}, DEFAULT_EPOCH_MS,
	'epoch changed: the lease file keeps the old epoch');

$node->adjust_conf('postgresql.conf', 'snowflake.epoch', "'2024-01-01 00:00:00+00'");
$node->start;
$before = max_id();
($min, $workers) = insert_rows();
cmp_ok($min, '>', $before, 'the old epoch restored: generation works, ids increase');
$node->stop;

# A corrupt lease file: garbage, then a truncated one.
my $lease_path = $node->data_dir . '/pg_snowflake/lease';
for my $corrupt ([ 'garbage', "not a lease\n" ],
	[ 'truncated', sprintf("snowflake lease 2\nepoch_unix_ms %d\nlease_", DEFAULT_EPOCH_MS) ])
{
	my ($what, $contents) = @$corrupt;
	unlink $lease_path or die "unlink: $!";
	append_to_file($lease_path, $contents);
	$node->start;
	like(refused('SELECT snowflake_nextval()'), qr/pg_snowflake\/lease" could not be read/,
		"$what lease file: generation refuses");
	is($node->safe_psql('postgres', 'SELECT generating, not_generating FROM snowflake_status'),
		'f|the lease file is damaged: run snowflake_repair_lease()', "$what lease file: snowflake_status shows no generation, and why");
	$node->stop;
	is(slurp_file($lease_path), $contents, "$what lease file: left as it was");
}

# One flipped bit in each field of a lease file (one in lease_ms would move
# the node's ids days ahead): the checksum refuses it, naming the file, and
# the server log says so at start.
unlink $lease_path or die "unlink: $!";
$node->start;
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$node->stop;
my $good = slurp_file($lease_path);
my $lease = read_lease($node);
for my $field (qw(epoch_unix_ms lease_ms clock_ms worker_id fenced directory))
{
	# the last digit of the field's first number ("fenced none": its "n")
	$good =~ /\n$field ([^\n]*?)(\d|e)( |\n)/ or die "no $field in the lease file";
	my $at = $-[2];
	my $flipped = $good;
	substr($flipped, $at, 1) = chr(ord(substr($good, $at, 1)) ^ 1);
	open my $fh, '>', $lease_path or die "open: $!";
	print $fh $flipped;
	close $fh;
	my $log_offset = -s $node->logfile;
	$node->start;
	like(refused('SELECT snowflake_nextval()'), qr/pg_snowflake\/lease" is corrupt/,
		"one bit flipped in $field: generation refuses, naming the file");
	ok($node->log_contains(qr/lease file "pg_snowflake\/lease" is corrupt \(its checksum does not match\)/, $log_offset),
		"one bit flipped in $field: the server log says so at start");
	$node->stop;
	open $fh, '>', $lease_path or die "open: $!";
	print $fh $good;
	close $fh;
}
$node->start;
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', 0, 'the file restored: generation works');
$node->stop;

# As the hint says: snowflake_repair_lease(), no restart; the damaged file
# kept aside. A role that is not a superuser may not call it.
unlink $lease_path or die "unlink: $!";
append_to_file($lease_path, "damaged\n");
$node->start;
like(refused('SELECT snowflake_nextval()'), qr/pg_snowflake\/lease" could not be read/,
	'a damaged lease file: generation refuses');
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
like(refused('SELECT snowflake_repair_lease()', extra_params => [ '-U', 'plain' ]),
	qr/permission denied for function snowflake_repair_lease/, 'a role without the grant cannot repair');
my $from = $node->safe_psql('postgres',
	q{SELECT snowflake_repair_lease() > now() + interval '2 s', (SELECT generating FROM snowflake_status)});
is($from, 't|f', 'snowflake_repair_lease(): ids continue after the clock plus lease span and max_lead; the worker id '
	  . 'in effect refused (a damaged lease cannot tell whether this is a copy)');
is($node->safe_psql('postgres', 'SELECT snowflake_adopt_worker_id()'), '51',
	'the operator adopts it: this is the server that issued ids under it');
ok(-e $node->data_dir . '/pg_snowflake/lease.replaced', 'the damaged file is kept as lease.replaced');
$before = max_id();
($min, $workers) = insert_rows();
cmp_ok($min, '>', $before, 'the lease repaired: generation works again, above every id before');
like(refused('SELECT snowflake_repair_lease()'), qr/the snowflake lease needs no repair/,
	'a lease in order needs no repair');
$node->restart;
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $min, 'and after a restart');
$node->stop;
done_testing();
