# Real drivers against a preloaded server: psycopg 3 (Debian python3-psycopg)
# and node-postgres (npm pg and pg-copy-streams, installed by test/run into
# SNOWFLAKE_NPM_DIR). Each script in test/drivers prints "ok - ..." /
# "not ok - ..." lines, turned into TAP here. A missing node-postgres is a
# loud SKIPPED, never a silent pass.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use SnowflakeTest;

my $npm_dir = $ENV{SNOWFLAKE_NPM_DIR} // '/var/cache/snowflake-npm';

my $node = snowflake_node('drivers', 4);
$node->start;

# Runs a driver script; each of its lines becomes a test, and its exit status one more.
sub run_driver
{
	my ($name, @command) = @_;
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	my ($stdout, $stderr);
	my $ok = IPC::Run::run(\@command, '>', \$stdout, '2>', \$stderr);
	my $checks = 0;
	for my $line (split /\n/, $stdout)
	{
		if ($line =~ /^(not )?ok - (.*)$/)
		{
			ok(!defined $1, $2);
			$checks++;
		}
		else
		{
			note($line);
		}
	}
	diag($stderr) if $stderr ne '';
	ok($ok && $checks > 0, "$name: script ran every check and exited 0");
}

run_driver('psycopg', '/usr/bin/python3', "$ENV{TESTDIR}/test/drivers/psycopg_test.py");

SKIP:
{
	if (!-d "$npm_dir/node_modules/pg" || !-d "$npm_dir/node_modules/pg-copy-streams")
	{
		diag("SKIPPED: node-postgres is not installed in $npm_dir (test/run installs it from the npm registry)");
		skip('SKIPPED: node-postgres is not installed', 1);
	}
	local $ENV{NODE_PATH} = "$npm_dir/node_modules";
	run_driver('node-postgres', 'node', "$ENV{TESTDIR}/test/drivers/node_pg_test.js");
}

$node->stop;
done_testing();
