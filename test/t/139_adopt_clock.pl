# snowflake_adopt_worker_id() on a copy whose clock is behind its source's:
# a backup of a node that went on issuing ids and then died, adopted as the
# hint says on a host whose clock is 60 s behind (libfaketime). Adopted at
# once, it would issue the dead node's later ids again: it is refused, naming
# by how much the clock is behind, and adopted with `after` (the time the
# source stopped) its ids continue above every id the source issued; while
# the adoption writes the lease (the backend held there by gdb), another call
# is still refused.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use SnowflakeTest;

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
plan skip_all => "libfaketime is not installed ($libfaketime)" unless -e $libfaketime;

my $source = snowflake_node('source', 41);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$source->safe_psql('postgres', 'SELECT snowflake_nextval()');
$source->stop;

# the backup: a cold copy
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init;
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $copy->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $source->data_dir, $copy->data_dir);
$copy->append_conf('postgresql.conf',
	"port = " . $copy->port . "\nunix_socket_directories = '" . $copy->host . "'\nmax_prepared_transactions = 2\n");

# the source goes on issuing ids, then dies
$source->start;
my $source_last = $source->safe_psql('postgres', 'SELECT max(snowflake_nextval()) FROM generate_series(1, 50000)');
my $stopped_at = $source->safe_psql('postgres', 'SELECT clock_timestamp()');
kill9_and_wait($source);

# the copy, on a host whose clock is 60 s behind
{
	local $ENV{LD_PRELOAD}                   = $libfaketime;
	local $ENV{FAKETIME}                     = '-60';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	$copy->start;
}
my ($stdout, $stderr);
$copy->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_adopt_worker_id()", stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/ERROR:  55000: worker id 41 is not adopted\nDETAIL:  This server's clock is (\d+) ms behind the latest clock reading its lease records/,
	'adopted on a clock 60 s behind: refused with SQLSTATE 55000, by how much');
my ($behind) = $stderr =~ /clock is (\d+) ms behind/;
cmp_ok($behind // 0, '>', 50000, "the figure is the clock's ($behind ms)");
like($stderr, qr/HINT:  .*snowflake_adopt_worker_id\(after => /, 'the hint gives the way: after');
like($copy->safe_psql('postgres', 'SELECT not_generating FROM snowflake_status'), qr/^fenced: /, 'still fenced');

# Adopted after the time the source stopped, the adopting backend held (gdb)
# at its write of the lease: meanwhile another call is still refused (the
# worker id is let through only once the lease and the floor are raised),
# never given an id of the source's.
SKIP:
{
	skip 'no gdb', 3 unless grep { -x "$_/gdb" } split /:/, $ENV{PATH};
	my $flag = PostgreSQL::Test::Utils::tempdir . '/go';
	$copy->safe_psql('postgres', 'CREATE TABLE gate (); BEGIN; LOCK gate; PREPARE TRANSACTION \'gate\'');
	my ($out, $err) = ('', '');
	my $adopting = IPC::Run::start(
		[ 'psql', '-X', '-At', '-d', $copy->connstr('postgres'), '-c', 'SELECT count(*) FROM gate',
			'-c', "SELECT snowflake_adopt_worker_id(after => '$stopped_at')" ],
		'>', \$out, '2>', \$err);
	$copy->poll_query_until('postgres', "SELECT count(*) = 1 FROM pg_locks WHERE NOT granted AND relation = 'gate'::regclass")
	  or die 'the adopting session did not wait at the gate';
	my $pid = $copy->safe_psql('postgres', "SELECT pid FROM pg_locks WHERE NOT granted AND relation = 'gate'::regclass");
	my ($gdb_out, $gdb_err) = ('', '');
	my $debugger = IPC::Run::start(
		[ 'gdb', '-nx', '-batch', '-p', $pid, '-ex', 'break snowflake::pg::write_lease', '-ex', 'continue',
			'-ex', "shell echo held; while [ ! -e '$flag' ]; do sleep 0.1; done" ],
		'<', \undef, '>', \$gdb_out, '2>', \$gdb_err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	$debugger->pump until $gdb_out =~ /^Breakpoint 1 at/m || !$debugger->pumpable;
	$copy->safe_psql('postgres', "COMMIT PREPARED 'gate'");
	# (gdb runs its next command once the breakpoint stops the backend)
	$debugger->pump until $gdb_out =~ /^held$/m || !$debugger->pumpable;
	like($gdb_out, qr/^Breakpoint 1\S*, .*write_lease.*\n(?:.*\n)*held$/m, 'the adopting backend is held at its write of the lease')
	  or diag($gdb_err);
	my ($rc, $id, $refused) = $copy->psql('postgres', 'SELECT snowflake_nextval()');
	ok(($rc != 0 && $refused =~ /is a copy of another server and may not issue ids under its worker id 41/) || ($rc == 0 && $id > $source_last),
		'meanwhile another call issues no id of the source\'s: refused while the lease is written'
		  . ($rc == 0 ? " (it got $id)" : ''));
	open my $fh, '>', $flag or die "$flag: $!";
	close $fh;
	$debugger->finish;
	$adopting->finish;
	is($out, "0\n41\n", 'adopted after the time the source stopped') or diag($err);
}
SKIP:
{
	skip 'gdb present: adopted above', 1 if grep { -x "$_/gdb" } split /:/, $ENV{PATH};
	is($copy->safe_psql('postgres', "SELECT snowflake_adopt_worker_id(after => '$stopped_at')"), '41',
		'adopted after the time the source stopped');
}
my $first = $copy->safe_psql('postgres', 'SELECT min(snowflake_nextval()) FROM generate_series(1, 1000)');
cmp_ok($first, '>', $source_last, 'its ids continue above every id the source issued, the clock 60 s behind');
# the adoption is in the WAL: it survives a crash restart, no CHECKPOINT needed
kill9_and_wait($copy);
$copy->start;
is($copy->safe_psql('postgres', 'SELECT not_generating FROM snowflake_status'), '',
	'adopted, kill -9: still adopted after the crash restart');
$copy->restart;
cmp_ok($copy->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $first, 'and after a restart');
$copy->stop;

done_testing();
