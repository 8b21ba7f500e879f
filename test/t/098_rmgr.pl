# The WAL resource manager id: snowflake uses RM_EXPERIMENTAL_ID
# (128) until one is registered; another library already on it stops the
# server at start with a message that names it and says what to do.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

# a library that takes id 128 first, built against this server's headers
my $tmp     = PostgreSQL::Test::Utils::tempdir;
my $library = "$tmp/rmgr_squatter.so";
my $source  = ($ENV{TESTDIR} // '.') . '/test/t/rmgr_squatter.c';
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $include = `$pg_config --includedir-server`;
chomp $include;
system('gcc', '-shared', '-fPIC', '-O1', "-I$include", '-o', $library, $source) == 0
  or BAIL_OUT("could not build $source");

my $node = snowflake_node('rmgr', 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = '$library, snowflake'\n");
my $offset = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'another library on resource manager id 128: the server does not start');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/snowflake cannot register its WAL resource manager: id 128 is taken by "squatter"/,
	'the log names the id and the library that holds it');
like($log, qr/HINT:  Load only one of them in "shared_preload_libraries"/, 'the hint says what to do');

# alone, it starts and registers
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'snowflake'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'), '>', 0, 'alone, snowflake starts and generates');
$node->stop;

done_testing();
