# The one boundary between PostgreSQL and C++ (src/pg/edge.hpp): a C++
# exception thrown inside a PG_TRY block leaves PostgreSQL's error stack
# pointing into a dead frame; the boundary restores it before it reports the
# exception, so the ERROR ends the statement and not the server
# (test/t/boundary_probe.cpp, built against this server's headers).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $tmp     = PostgreSQL::Test::Utils::tempdir;
my $library = "$tmp/boundary_probe.so";
my $root    = $ENV{TESTDIR} // '.';
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
chomp(my $include = `$pg_config --includedir-server`);
# with the boundary's own source (a library's symbols are hidden from others from 16 on)
system('g++', '-std=c++20', '-shared', '-fPIC', '-O1', '-w', "-I$include", "-I$root/src/pg", '-o', $library,
	"$root/test/t/boundary_probe.cpp", "$root/src/pg/boundary.cpp") == 0
  or BAIL_OUT('could not build test/t/boundary_probe.cpp');

my $node = snowflake_node('boundary', 1);
$node->start;
$node->safe_psql('postgres',
	"CREATE FUNCTION boundary_probe(boolean) RETURNS boolean AS '$library', 'boundary_probe_throw_in_try' LANGUAGE C STRICT");
is($node->safe_psql('postgres', 'SELECT boundary_probe(false)'), 't', 'the probe, not throwing, returns');
my $offset = -s $node->logfile;
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT boundary_probe(true); SELECT 42');
like($err, qr/ERROR:  snowflake: thrown inside PG_TRY/, 'an exception thrown inside PG_TRY: an ERROR naming it');
my $log = slurp_file($node->logfile, $offset);
like($log, qr/LOG:  snowflake: a C\+\+ exception left a PostgreSQL error block \(PG_TRY\) without its PG_CATCH/,
	'the log says the error stacks were restored');
unlike($log, qr/terminated by signal|server process .* was terminated|all server processes terminated/,
	'no backend crashed: the server did not restart');
is($node->safe_psql('postgres', 'SELECT 1 + 1'), '2', 'the server answers');
$node->stop;
done_testing();
