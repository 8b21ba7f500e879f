# Every lease write is synced before ids under it are handed out (test/mutate
# removes the lease write's fdatasync: this file fails then). The server
# runs with an LD_PRELOAD shim (test/t/fail_sync.c) that counts the fsync and
# fdatasync calls on files under pg_snowflake, and fails them with EIO while a
# flag file exists:
#  - in normal operation there are at least as many syncs as lease writes;
#  - with syncs failing, a call that needs the lease is refused (58030) and no
#    id is issued under a lease that is not on disk; the server does not
#    PANIC; generation resumes once syncs work again.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $tmp  = PostgreSQL::Test::Utils::tempdir;
my $shim = "$tmp/fail_sync.so";
my $source = ($ENV{TESTDIR} // '.') . '/test/t/fail_sync.c';
system('g++', '-x', 'c', '-shared', '-fPIC', '-O1', '-o', $shim, $source, '-ldl') == 0
  or BAIL_OUT("could not build $source");
my $flag = "$tmp/fail";

my $node = snowflake_node('sync', 73, "fsync = on\nsnowflake.lease_span = '500ms'\n");    # test nodes run with fsync off
{
	local $ENV{LD_PRELOAD}          = $shim;
	local $ENV{SNOWFLAKE_FAIL_SYNC} = $flag;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
sub query { return $node->safe_psql('postgres', $_[0]); }
sub syncs
{
	my $count = -e "$flag.count" ? slurp_file("$flag.count") : '';
	return ($count =~ tr/s//, $count =~ tr/F//);
}

# 1. Normal operation: every lease write is followed by a sync.
my ($synced_before) = syncs();
my $extensions_before = query('SELECT lease_extensions FROM snowflake_status');
for (1 .. 10)
{
	query('SELECT count(*) FROM snowflake_nextvals(1000)');
	$node->poll_query_until('postgres',
		"SELECT lease_extensions > $extensions_before FROM snowflake_status")
	  or die 'no lease write';
	$extensions_before = query('SELECT lease_extensions FROM snowflake_status');
}
my ($synced_after) = syncs();
my $extensions = query('SELECT lease_extensions FROM snowflake_status');
cmp_ok($synced_after - $synced_before, '>=', 10,
	sprintf('%d lease writes, %d syncs of files under pg_snowflake', $extensions, $synced_after - $synced_before));

# 2. Syncs fail: the lease is not extended, calls are refused, nothing issued
# past the lease on disk.
my $last = query('SELECT max(x) FROM snowflake_nextvals(10) x');
append_to_file($flag, 'on');
# The lease in effect once a sync has failed: a write that synced before the
# flag was set (the lease writer runs beside the calls) is published by then.
my $waited = 0;
while ((syncs())[1] == 0)
{
	die 'no sync failed' if ++$waited > 600;
	$node->psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(100)');  # refused once the lease lapses
	select(undef, undef, undef, 0.05);
}
my $lease = query('SELECT lease_until FROM snowflake_status');
$node->poll_query_until('postgres',
	"SELECT clock_timestamp() > lease_until + interval '100 ms' FROM snowflake_status")
  or die 'the lease did not lapse';
my ($stdout, $stderr);
$node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()",
	stdout => \$stdout, stderr => \$stderr);
like($stderr, qr/ERROR:  58030: could not extend the snowflake lease/,
	'syncs of the lease failing: the call is refused (58030)');
my (undef, $failed) = syncs();
cmp_ok($failed, '>', 0, "the lease write tried to sync and failed ($failed failed syncs)");
is(query('SELECT lease_until FROM snowflake_status'), $lease, 'the lease in effect did not move');
ok(!$node->log_contains(qr/PANIC/), 'no PANIC');

# 3. Syncs work again: generation resumes above every id before.
unlink $flag or die "unlink: $!";
cmp_ok(query('SELECT snowflake_nextval()'), '>', $last, 'syncs working again: ids above every id before');

$node->stop;
done_testing();
