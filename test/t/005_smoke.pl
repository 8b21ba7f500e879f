# Smoke test of a preloaded server, the first thing to fail on a new major
# (test/run runs it on every tested one): ids under a non-default epoch, the
# lease file, a clean restart and a crash restart (kill -9 of the lease writer,
# a postmaster child: the postmaster resets shared memory), ids increasing
# across both.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SnowflakeTest;

my $epoch_ms = 1685577600000;    # 2023-06-01 00:00:00 UTC
my $node = snowflake_node('smoke', 3,
	"snowflake.epoch = '2023-06-01 00:00:00+00'\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), phase int NOT NULL);
});

# Inserts 1000 rows of a phase; returns their smallest and largest id.
sub insert_phase
{
	my ($phase) = @_;
	return split /\|/, $node->safe_psql('postgres', qq{
INSERT INTO t (phase) SELECT $phase FROM generate_series(1, 1000);
SELECT min(id), max(id) FROM t WHERE phase = $phase});
}

my ($min1, $max1) = insert_phase(1);
cmp_ok($max1, '>', $min1, 'ids are generated and increase');
is( $node->safe_psql('postgres', qq{
SELECT d.worker_id = 3 AND abs(extract(epoch FROM d.ts - now())) < 60
FROM snowflake_decode($max1) d}),
	't', 'an id decodes to worker 3 and about now, under the configured epoch');
my $lease = read_lease($node);
ok(defined $lease, 'the lease file exists');
is($lease->{epoch_unix_ms}, $epoch_ms, 'the lease names the configured epoch');
cmp_ok($lease->{lease_ms}, '>=', time_of($max1), 'the lease covers every id issued');

# Extending the lease overwrites the file in place (one write and one
# fdatasync, no rename): the same inode, a higher lease.
my $lease_path = $node->data_dir . '/pg_snowflake/lease';
my $inode = (stat $lease_path)[1];
my $extensions = $node->safe_psql('postgres', 'SELECT lease_extensions FROM snowflake_status');
$node->poll_query_until('postgres',
	"SELECT snowflake_nextval() > 0 AND lease_extensions > $extensions FROM snowflake_status")
  or die 'the lease was not extended';
cmp_ok(read_lease($node)->{lease_ms}, '>', $lease->{lease_ms}, 'the lease was extended');
is((stat $lease_path)[1], $inode, 'the lease file was overwritten in place (same inode)');

$node->restart;
ok(!$node->log_contains(qr/snowflake lease worker.*exited with exit code/),
	'a clean shutdown: the lease worker exits with 0 (not logged as a failure)');
my ($min2, $max2) = insert_phase(2);
cmp_ok($min2, '>', $max1, 'ids after a clean restart are greater than every id before');

# the lease worker terminated by another process (pg_terminate_backend would):
# it exits with 1 and PostgreSQL starts it again
my $terminated = lease_writer_pid($node);
kill 'TERM', $terminated or die 'no lease worker to terminate';
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
my $again;
usleep(100_000) until (($again = lease_writer_pid($node)) && $again != $terminated) || time > $deadline;
ok($again && $again != $terminated, 'the lease worker terminated by another process is started again');
ok($node->log_contains(qr/background worker "snowflake lease worker" \(PID $terminated\) exited with exit code 1/),
	'... having exited with 1');

my $writer = lease_writer_pid($node);
ok(defined $writer, 'the lease writer runs');
my $log_offset = -s $node->logfile;
kill 'KILL', $writer;
wait_for_crash_restart($node, $log_offset);
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the node did not come back after the crash';
my ($min3) = insert_phase(3);
cmp_ok($min3, '>', $max2, 'ids after a crash restart are greater than every id before');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM t'), '3000', 'no id repeats');

$node->stop;
done_testing();
