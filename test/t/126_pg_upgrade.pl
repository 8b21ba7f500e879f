# pg_upgrade from PostgreSQL 15 to this leg's major, with Debian's pg_upgrade
# and server of that major (test/run gives both installations, snowflake
# installed in each: SNOWFLAKE_UPGRADE_FROM, SNOWFLAKE_UPGRADE_TO; by hand,
# this installation to itself). Checked: the extension's catalog after the
# upgrade, with no step after it, is a fresh install's, every member of core's
# operator families naming snowflake included and bound as there (which
# test/upgrade/catalog.sql is shown to see), and the data came along with a
# foreign key from a snowflake column to a bigint key (which needs those
# members restored before it); so it is
# after a second upgrade in a row (of this leg's major to itself), where a
# join of snowflake with an indexed bigint reads the index;
# the upgraded node, its clock set back an hour, refuses to issue ids until
# the old data directory's lease is copied in (saying so, with that step),
# then issues ids above every id issued before the upgrade, under the same
# worker id, and is not taken for a copy at its next start; an old data
# directory that never issued an id has no lease, and removing the mark is
# then the step; upgraded without snowflake preloaded, from a cluster whose
# cross-type members were left loose (as a 1.0 upgrade without the repair
# left them), its catalog is a fresh install's too. The old data directory,
# preloaded, is marked as upgraded away when pg_upgrade dumps it (never by
# pg_upgrade --check): started again beside the upgraded one it issues no id
# (55000), and removing its mark, the way back from an abandoned upgrade,
# lets it issue ids again.
use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use File::Copy qw(copy);
use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my ($from, $to) = @ENV{qw(SNOWFLAKE_UPGRADE_FROM SNOWFLAKE_UPGRADE_TO)};
if (!defined $from || !defined $to)
{
	my $bindir = `pg_config --bindir`;
	chomp $bindir;
	$from = $to = dirname($bindir);
}
plan skip_all => "no pg_upgrade in $to/bin" unless -x "$to/bin/pg_upgrade";
plan skip_all => "snowflake is not installed in $from" unless -e "$from/lib/snowflake.so";
my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime is not installed ($libfaketime)" unless -e $libfaketime;

my $root = $ENV{TESTDIR} // '.';
my $catalog = slurp_file("$root/test/upgrade/catalog.sql");
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $upgrades = 0;
my @checksums = (extra => ['--data-checksums']);  # 18's initdb default, not 15's

# The old node's data directory (of the installation $old_install, $from if
# not given) upgraded into a new node of $to (stopped), with snowflake
# preloaded during the upgrade or, if not $preloaded, loaded only by
# pg_upgrade's check of the libraries the old cluster uses and by the restore.
sub upgraded
{
	my ($old, $preloaded, $old_install) = @_;
	$old_install //= $from;
	my $new = snowflake_node('upgraded' . ++$upgrades, 7, undef, @checksums, install_path => $to);
	$new->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''") unless $preloaded;
	# Debian's 15.20 and 17.12 (November 2026) keep an option pg_attver on
	# every column, which Debian's 18.6-3 does not know: pg_upgrade from them
	# to it fails on the first table, with or without snowflake. Where the
	# new server does not know the option, the old cluster's tables lose it.
	$new->start;
	my $knows = $new->safe_psql('postgres', q{SELECT count(*) > 0 FROM pg_attribute WHERE attoptions::text LIKE '%pg_attver=%'});
	$new->stop;
	if ($knows eq 'f')
	{
		$old->start;
		for my $db (split /\n/, $old->safe_psql('postgres', 'SELECT datname FROM pg_database WHERE datallowconn'))
		{
			$old->safe_psql($db, q{UPDATE pg_attribute SET attoptions = (SELECT array_agg(o) FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%')
WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg_attver=%'});
		}
		$old->stop;
		note 'pg_attver removed from the old cluster\'s columns: the new server does not know it';
	}
	mkdir "$tmp/run$upgrades";
	chdir "$tmp/run$upgrades";
	# --jobs: a pg_dump session per database at once, each marking the old
	# data directory (each writes the mark whole: none fails)
	command_ok(pg_upgrade($old, $new, $old_install, '--jobs', '4'),
		sprintf('pg_upgrade --jobs 4 from %s to %s', $old->pg_version, $new->pg_version));
	die 'pg_upgrade failed' unless (Test::More->builder->summary)[-1];  # this upgrade, whatever failed before
	chdir $tmp;
	$new->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'snowflake'");
	return $new;
}

# The pg_upgrade command from the old node's data directory (of the
# installation $old_install) into the new one's.
sub pg_upgrade
{
	my ($old, $new, $old_install, @options) = @_;
	return [ "$to/bin/pg_upgrade", '--no-sync', '-d', $old->data_dir, '-D', $new->data_dir,
		'-b', "$old_install/bin", '-B', "$to/bin", '-s', $new->host, '-p', $old->port, '-P', $new->port, @options ];
}

# Starts a node with its clock an hour behind.
sub start_an_hour_back
{
	my ($node) = @_;
	local $ENV{LD_PRELOAD}                   = $libfaketime;
	local $ENV{FAKETIME}                     = '-1h';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$node->start;
	return;
}

# Both nodes asked for 500 ids each, four times in turns: how many each
# issued, and how many both issued.
sub issued
{
	my ($one, $other) = @_;
	my (%seen, %count);
	my $both = 0;
	for my $round (1 .. 4)
	{
		for my $node ($one, $other)
		{
			my ($ret, $out, $err) = $node->psql('app', 'SELECT x FROM snowflake_nextvals(500) x');
			for my $id (split /\n/, $out // '')
			{
				$both++ if ($seen{$id} // $node->name) ne $node->name;
				$seen{$id} = $node->name;
				$count{ $node->name }++;
			}
		}
	}
	return ($count{ $one->name } // 0, $count{ $other->name } // 0, $both);
}

sub refusal
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('app', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()");
	return $err;
}

# --- the old node: ids in tables whose keys cross snowflake and bigint
my $old = snowflake_node('old', 7, undef, @checksums, install_path => $from);
$old->start;
$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', 'CREATE EXTENSION snowflake');
for my $n (1 .. 5)  # databases dumped in parallel by pg_upgrade --jobs
{
	$old->safe_psql('postgres', "CREATE DATABASE app$n");
	$old->safe_psql("app$n", 'CREATE EXTENSION snowflake');
}
$old->stop;

# --- pg_upgrade --check starts the old cluster (-b) but does not dump it: not marked
{
	my $checked = snowflake_node('checked', 7, undef, @checksums, install_path => $to);
	mkdir "$tmp/check";
	chdir "$tmp/check";
	command_ok(pg_upgrade($old, $checked, $from, '--check'), 'pg_upgrade --check');
	chdir $tmp;
	ok(!-e $old->data_dir . '/pg_snowflake/upgraded_away', 'pg_upgrade --check leaves the old data directory unmarked');
	$old->start;
	like($old->safe_psql('app', 'SELECT snowflake_nextval()'), qr/^\d+$/, 'and it issues ids after the check');
}

$old->safe_psql('app', q{
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
CREATE TABLE events (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), order_id snowflake REFERENCES orders);
INSERT INTO orders (item) SELECT 'item ' || i FROM generate_series(1, 5000) i;
INSERT INTO events (order_id) SELECT id FROM orders;
});
my $data_query = 'SELECT count(*), max(id), (SELECT max(id::bigint) FROM events) FROM orders';
my $data_before = $old->safe_psql('app', $data_query);
my $last_before = $old->safe_psql('app', 'SELECT greatest((SELECT max(id) FROM orders), (SELECT max(id::bigint) FROM events))');
$old->stop;

my $new = upgraded($old, 1);
ok(-e $new->data_dir . '/pg_snowflake/upgraded', 'pg_upgrade\'s new data directory is marked as upgraded');

# --- the upgraded node, its clock an hour back, without the old lease: refuses
start_an_hour_back($new);
my $behind = time - $new->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
ok($behind > 3500 && $behind < 3700, sprintf('the upgraded server\'s clock is an hour behind (%.0f s)', $behind));
my $err = refusal($new);
like($err, qr/ERROR:  55000: this data directory was made by pg_upgrade without its snowflake lease/,
	'without the old lease: no id (55000), saying why');
like($err, qr/HINT:  Stop the server, copy the file "pg_snowflake\/lease" of the old data directory into this data directory's "pg_snowflake" directory, and start the server again/,
	'the hint names the step');
ok(log_count($new, qr/made by pg_upgrade without the old data directory's lease; no id is issued/) >= 1,
	'and the log says so at start');
is($new->safe_psql('app', 'SELECT generating, not_generating FROM snowflake_status'),
	"f|pg_upgrade made this data directory without the old one's lease: copy pg_snowflake/lease in", 'snowflake_status: cannot generate, and why');

# the catalog: a fresh install's, with no step after the upgrade
is($new->safe_psql('app', $data_query), $data_before, 'the data came along');
my $members = q{SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT FROM pg_depend d
   WHERE d.classid = 'pg_amop'::regclass AND d.objid = o.oid AND d.refclassid = 'pg_opclass'::regclass AND d.deptype = 'i'))
  FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
 WHERE f.opfname = 'integer_ops' AND 'snowflake'::regtype IN (o.amoplefttype, o.amoprighttype)};
is($new->safe_psql('app', $members), '42|42',
	'the 42 operators of snowflake in core\'s integer_ops came along, each bound to its class');
$new->safe_psql('postgres', 'CREATE DATABASE fresh');
$new->safe_psql('fresh', 'CREATE EXTENSION snowflake');
my @fresh = split /\n/, $new->safe_psql('fresh', $catalog);
cmp_ok(scalar @fresh, '>', 200, sprintf('a fresh install has %d objects', scalar @fresh));
is_deeply([ split /\n/, $new->safe_psql('app', $catalog) ], \@fresh,
	'the upgraded catalog is a fresh install\'s (test/upgrade/catalog.sql), with no step after pg_upgrade');

# the comparison sees a member unbound from its class (loose in the family,
# which the next upgrade's dump would drop) and one missing from the family;
# snowflake_repair_integer_ops() still puts either back
my $unbind = q{DELETE FROM pg_depend d USING pg_amop o, pg_opfamily f, pg_am a
 WHERE d.classid = 'pg_amop'::regclass AND d.objid = o.oid AND d.deptype = 'i'
   AND f.oid = o.amopfamily AND a.oid = f.opfmethod AND f.opfname = 'integer_ops' AND a.amname = '%s'
   AND o.amopopr = '=(snowflake,bigint)'::regoperator};
$new->safe_psql('postgres', 'CREATE DATABASE broken');
$new->safe_psql('broken', 'CREATE EXTENSION snowflake; ' . sprintf($unbind, 'hash'));
# the lines of a database's catalog that are not a fresh install's, and the fresh install's it lacks
sub catalog_differences
{
	my ($node, $db) = @_;
	my %fresh = map { $_ => 1 } @fresh;
	my @lines = split /\n/, $node->safe_psql($db, $catalog);
	my %lines = map { $_ => 1 } @lines;
	return ([ grep { !$fresh{$_} } @lines ], [ grep { !$lines{$_} } @fresh ]);
}
my ($extra, $missing) = catalog_differences($new, 'broken');
like(join("\n", @$extra), qr/^operator 1 \(snowflake, bigint\) of operator family integer_ops for access method hash: =\(snowflake,bigint\) \| s \| a operator =\(snowflake,bigint\)$/,
	'the catalog comparison sees a member unbound from its class (its line alone differs: no class binds it)');
is(scalar @$missing, 1, 'in place of the bound one');
is($new->safe_psql('broken', 'SELECT snowflake_repair_integer_ops()'), '1', 'snowflake_repair_integer_ops() binds it again');
is_deeply([ split /\n/, $new->safe_psql('broken', $catalog) ], \@fresh, 'and the catalog is a fresh install\'s');
$new->safe_psql('broken', sprintf($unbind, 'btree') . '; ALTER OPERATOR FAMILY integer_ops USING btree DROP OPERATOR 3 (snowflake, bigint)');
($extra, $missing) = catalog_differences($new, 'broken');
is(scalar @$extra, 0, 'a member removed from the family: no line more');
like(join("\n", @$missing), qr/^operator 3 \(snowflake, bigint\) of operator family integer_ops for access method btree: =\(snowflake,bigint\) \|[^\n]*$/,
	'the catalog comparison sees the member missing from the family');
is($new->safe_psql('broken', 'SELECT snowflake_repair_integer_ops()'), '2', 'snowflake_repair_integer_ops() adds and binds it');
is_deeply([ split /\n/, $new->safe_psql('broken', $catalog) ], \@fresh, 'and the catalog is a fresh install\'s');
$new->safe_psql('postgres', 'DROP DATABASE broken');
is($new->safe_psql('app', q{SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'events'::regclass}),
	'1', 'the foreign key between snowflake and bigint came along');
$new->stop;

# --- the one step: the old lease copied in
copy($old->data_dir . '/pg_snowflake/lease', $new->data_dir . '/pg_snowflake/lease') or die "copy: $!";
start_an_hour_back($new);
ok(log_count($new, qr/the lease of the data directory this one was upgraded from is carried over/) >= 1,
	'the log says the lease was carried over');
ok(!-e $new->data_dir . '/pg_snowflake/upgraded', 'the mark is gone');
my $first = $new->safe_psql('app', 'INSERT INTO orders (item) VALUES (\'after\') RETURNING id');
cmp_ok($first, '>', $last_before, "the first id after the upgrade, the clock an hour back, is above every id before it ($first > $last_before)");
is($new->safe_psql('app', "SELECT (snowflake_decode($first)).worker_id"), '7', 'under the same worker id');
$new->safe_psql('app', q{INSERT INTO orders (item) SELECT 'again ' || i FROM generate_series(1, 2000) i;
INSERT INTO events (order_id) SELECT id FROM orders WHERE item LIKE 'again %'});
is($new->safe_psql('app', "SELECT count(*), count(*) FILTER (WHERE id <= $last_before) FROM orders WHERE item NOT LIKE 'item %'"),
	'2001|0', 'no new id at or below the old ones (2,001 more)');
$new->restart;
is($new->safe_psql('app', 'SELECT snowflake_nextval() > ' . $new->safe_psql('app', 'SELECT max(id) FROM orders')),
	't', 'restarted: ids continue, the carried lease being this directory\'s own (no clone fence)');
is(log_count($new, qr/is a copy of another server's/), 0, 'and it was never taken for a copy');

# --- the old data directory, started again beside the upgraded one: no id
ok(-e $old->data_dir . '/pg_snowflake/upgraded_away', 'pg_upgrade (copy mode) marked the old data directory');
$old->start;
$err = refusal($old);
like($err, qr/ERROR:  55000: this data directory was upgraded by pg_upgrade/,
	'the old cluster refuses (55000), saying it was upgraded');
like($err, qr/HINT:  .*If the upgrade was abandoned and the upgraded cluster never issued an id, remove the file "pg_snowflake\/upgraded_away"/,
	'the hint names the way back from an abandoned upgrade');
ok(log_count($old, qr/this data directory was upgraded by pg_upgrade; no id is issued/) >= 1, 'and its log says so at start');
is($old->safe_psql('app', 'SELECT generating, not_generating FROM snowflake_status'),
	'f|pg_upgrade upgraded this data directory: the new one issues the ids', 'snowflake_status: not generating, and why');
my ($from_new, $from_old, $both) = issued($new, $old);
note "ids issued by the upgraded cluster: $from_new, by the old one: $from_old, by both: $both";
is($from_new, 2000, 'beside it, the upgraded cluster issues ids');
is($from_old, 0, 'the old cluster beside the upgraded one: 0 ids');
is($both, 0, '0 ids issued by both');
$old->stop;
$new->stop;

# --- a second pg_upgrade in a row, of this leg's major to itself, with no step
# between: snowflake stays in core's integer family, a join of a snowflake
# column with an indexed bigint column reads the index, and DROP EXTENSION
# removes exactly its members
$new->start;
my $data_again = $new->safe_psql('app', $data_query);
my $some_order = $new->safe_psql('app', 'SELECT min(order_id::bigint) FROM events');
$new->stop;
my $again = upgraded($new, 1, $to);
$again->start;
is($again->safe_psql('app', $data_query), $data_again, 'a second pg_upgrade in a row: the data came along');
is($again->safe_psql('app', $members), '42|42', 'the 42 operators of snowflake are still in integer_ops, each bound');
is_deeply([ split /\n/, $again->safe_psql('app', $catalog) ], \@fresh,
	'the catalog after two upgrades, with no step after either, is a fresh install\'s');
is_deeply([ split /\n/, $again->safe_psql('fresh', $catalog) ], \@fresh, 'and so is the fresh install\'s, upgraded');
$again->safe_psql('app', 'ANALYZE');
my $join = $again->safe_psql('app',
	"EXPLAIN (COSTS OFF) SELECT o.item FROM events e JOIN orders o ON o.id = e.id WHERE e.order_id = $some_order");
like($join, qr/Index Scan using orders_pkey on orders/, 'a join of a snowflake column with an indexed bigint column reads the index');
unlike($join, qr/Seq Scan on orders/, 'and not the whole table');
my $core_members = q{SELECT (SELECT count(*) FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily WHERE f.opfname = 'integer_ops'),
 (SELECT count(*) FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily WHERE f.opfname = 'integer_ops')};
is($again->safe_psql('app', "SET client_min_messages = warning; BEGIN; DROP EXTENSION snowflake CASCADE; $core_members; ROLLBACK"),
	$again->safe_psql('postgres', $core_members), 'DROP EXTENSION leaves integer_ops as in a database without snowflake');
is($again->safe_psql('app', 'SELECT snowflake_repair_integer_ops()'), '0', 'snowflake_repair_integer_ops(), never called, finds nothing to do');
$again->stop;

# --- an old data directory without a lease (1.0's that never issued an id): the mark is removed instead
my $unused = snowflake_node('unused', 8, undef, @checksums, install_path => $from);
$unused->start;
$unused->safe_psql('postgres', 'CREATE DATABASE app');
$unused->safe_psql('app', 'CREATE EXTENSION snowflake');
# its cross-type members loose, as a 1.0 upgrade without the repair left them: its dump lacks them
cmp_ok($unused->safe_psql('app', q{WITH unbound AS (DELETE FROM pg_depend d USING pg_amop o
 WHERE d.classid = 'pg_amop'::regclass AND d.objid = o.oid AND d.deptype = 'i' AND o.amoplefttype <> o.amoprighttype
   AND o.amopfamily IN (SELECT oid FROM pg_opfamily WHERE opfname = 'integer_ops') RETURNING 1) SELECT count(*) FROM unbound}),
	'==', 36, 'an old cluster whose 36 cross-type operators in integer_ops are loose');
$unused->stop;
like(slurp_file($unused->data_dir . '/pg_snowflake/lease'), qr/\nworker_id 8\n/,
	'an old node that never issued an id has a lease, written as its worker id took effect');
# as a 1.0 node that never issued an id (1.0 wrote the lease at the first id)
unlink $unused->data_dir . '/pg_snowflake/lease' or die "unlink: $!";
my $second = upgraded($unused, 0);
ok(-e $second->data_dir . '/pg_snowflake/upgraded',
	'marked also when snowflake was not preloaded during the upgrade (loaded by pg_upgrade\'s check of libraries)');

# the upgrade abandoned before the upgraded cluster issued an id: the hint's way back
$unused->start;
like(refusal($unused), qr/55000: this data directory was upgraded by pg_upgrade/, 'the old cluster refuses');
$unused->stop;
unlink $unused->data_dir . '/pg_snowflake/upgraded_away' or die "unlink: $!";
$unused->start;
like($unused->safe_psql('app', 'SELECT snowflake_nextval()'), qr/^\d+$/,
	'with its mark removed (the upgrade abandoned), the old cluster issues ids again');
$unused->stop;
$second->start;
is_deeply([ split /\n/, $second->safe_psql('app', $catalog) ], \@fresh,
	'upgraded from it, not preloaded, with no step after: the catalog is a fresh install\'s');
like(refusal($second), qr/55000: this data directory was made by pg_upgrade/, 'its upgraded node refuses too');
$second->stop;
unlink $second->data_dir . '/pg_snowflake/upgraded' or die "unlink: $!";
$second->start;
like($second->safe_psql('app', 'SELECT snowflake_nextval()'), qr/^\d+$/, 'with the mark removed, it issues ids');
$second->stop;

# The old cluster as pg_upgrade starts it (-b), its sessions setting
# quote_all_identifiers as pg_dump does, eight at once, each new (pgbench -C):
# every one that marks the directory writes the mark whole, none fails.
{
	my $marked = snowflake_node('marked', 9, undef, install_path => $from);
	$marked->start;
	$marked->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$marked->stop;
	command_ok([ "$from/bin/pg_ctl", '-D', $marked->data_dir, '-o', '-b', '-l', $marked->logfile, '-w', 'start' ],
		'the old cluster started as pg_upgrade starts it');
	my $script = "$tmp/mark.sql";
	append_to_file($script, "SET quote_all_identifiers = on;\nSELECT 1;\n");
	# the mark removed again and again meanwhile: many sessions write it at once
	my $mark = $marked->data_dir . '/pg_snowflake/upgraded_away';
	my ($out, $err) = ('', '');
	my $sessions = IPC::Run::start([ "$from/bin/pgbench", '-n', '-C', '-f', $script, '-c', '8', '-j', '8', '-t', '40',
		'-h', $marked->host, '-p', $marked->port, 'postgres' ], '>', \$out, '2>', \$err);
	my $removed = 0;
	while ($sessions->pumpable)
	{
		$removed += unlink $mark;
		$sessions->pump_nb;
		usleep(2000);
	}
	my $all_done = $sessions->finish;
	note "the mark removed $removed times while the sessions ran";
	ok($all_done && $out =~ /number of transactions actually processed: 320\/320/,
		'eight pg_dump-like sessions at once, 320 in all, the mark removed under them: none fails')
	  or diag "$out\n$err";
	$marked->safe_psql('postgres', 'SET quote_all_identifiers = on; SELECT 1');  # marks it once more
	is(log_count($marked, qr/could not write file "pg_snowflake\/upgraded_away"/), 0, 'no session failed to write the mark');
	ok(-e $marked->data_dir . '/pg_snowflake/upgraded_away', 'the data directory is marked');
	is(scalar(my @left = glob($marked->data_dir . '/pg_snowflake/*.tmp')), 0, 'no temporary file is left');
	command_ok([ "$from/bin/pg_ctl", '-D', $marked->data_dir, '-m', 'fast', '-w', 'stop' ], 'stopped');
}

done_testing();
