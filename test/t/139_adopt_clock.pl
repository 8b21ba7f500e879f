# snowflake_adopt_worker_id() on a copy whose clock is behind its source's:
# a backup of a node that went on issuing ids and then died, adopted as the
# hint says on a host whose clock is 60 s behind (libfaketime). Adopted at
# once, it issued the dead node's later ids again; now it is refused, naming
# by how much the clock is behind, and adopted with `after` (the time the
# source stopped) its ids continue above every id the source issued.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
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
$copy->append_conf('postgresql.conf', "port = " . $copy->port . "\nunix_socket_directories = '" . $copy->host . "'\n");

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
like($stderr, qr/ERROR:  55000: worker id 41 is not adopted: this server's clock is (\d+) ms behind the latest clock reading its lease records/,
	'adopted on a clock 60 s behind: refused with SQLSTATE 55000, by how much');
my ($behind) = $stderr =~ /clock is (\d+) ms behind/;
cmp_ok($behind // 0, '>', 50000, "the figure is the clock's ($behind ms)");
like($stderr, qr/HINT:  .*snowflake_adopt_worker_id\(after => /, 'the hint gives the way: after');
like($copy->safe_psql('postgres', 'SELECT not_generating FROM snowflake_status'), qr/^fenced: /, 'still fenced');

is($copy->safe_psql('postgres', "SELECT snowflake_adopt_worker_id(after => '$stopped_at')"), '41',
	'adopted after the time the source stopped');
my $first = $copy->safe_psql('postgres', 'SELECT min(snowflake_nextval()) FROM generate_series(1, 1000)');
cmp_ok($first, '>', $source_last, 'its ids continue above every id the source issued, the clock 60 s behind');
$copy->restart;
cmp_ok($copy->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', $first, 'and after a restart');
$copy->stop;

done_testing();
