# Real drivers and ORMs against a preloaded server (docs/drivers.md): psycopg 3,
# psycopg2, SQLAlchemy, Django, pgx v4, JDBC, Hibernate, ActiveRecord (Debian's
# packages), node-postgres and knex (npm, installed by test/run into
# SNOWFLAKE_NPM_DIR). Each program of test/drivers prints "ok - ..." /
# "not ok - ..." lines, turned into TAP here; before each, the table orders is
# made anew (id bigint and sid snowflake, both DEFAULT snowflake_nextval(), and
# sids snowflake[]). A driver whose package is missing is a loud SKIPPED, never
# a silent pass.
use strict;
use warnings;
use File::Temp ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use SnowflakeTest;

my $npm_dir = $ENV{SNOWFLAKE_NPM_DIR} // '/var/cache/snowflake-npm';
my $drivers = "$ENV{TESTDIR}/test/drivers";
my $scratch = File::Temp::tempdir(CLEANUP => 1);

# TCP on 127.0.0.1 too, for JDBC; fresh ids above 2^53, whatever the default layout
my $node = snowflake_node('drivers', 4,
	"listen_addresses = '127.0.0.1'\nsnowflake.layout = 'time=41 worker=10 sequence=12'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# The table every program of test/drivers but the first two works on: 1000
# rows, so that a lookup by a parameter of the right type is an index scan.
sub reset_orders
{
	$node->safe_psql(
		'postgres', q{
		DROP TABLE IF EXISTS orders;
		CREATE TABLE orders (
			id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
			sid snowflake UNIQUE NOT NULL DEFAULT snowflake_nextval(),
			sids snowflake[],
			note text);
		INSERT INTO orders (note) SELECT 'seed ' || g FROM generate_series(1, 1000) g;
		ANALYZE orders;});
}

# Runs a driver program; each of its lines becomes a test, and its exit status one more.
# PGHOST is the socket directory, but for a name ending in "(tcp)".
sub run_driver
{
	my ($name, @command) = @_;
	reset_orders();
	local $ENV{PGHOST} = $name =~ /\(tcp\)$/ ? '127.0.0.1' : $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	my ($stdout, $stderr);
	my $started = time;
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
	ok($ok && $checks > 0, "$name: program ran every check and exited 0 (" . (time - $started) . " s)");
}

# The Debian packages of those named that are not installed.
sub missing_packages
{
	return grep {
		my $status = `dpkg-query -W -f '\${Status}' $_ 2>/dev/null`;
		$status ne 'install ok installed'
	} @_;
}

# Runs the driver unless one of its packages is missing.
sub driver
{
	my ($name, $packages, $run) = @_;
  SKIP:
	{
		my @missing = missing_packages(@$packages);
		if (@missing)
		{
			diag("SKIPPED: $name: not installed: @missing (test/run installs it)");
			skip("SKIPPED: $name: not installed: @missing", 1);
		}
		$run->();
	}
}

driver('psycopg', ['python3-psycopg'],
	sub { run_driver('psycopg', '/usr/bin/python3', "$drivers/psycopg_test.py") });
driver('psycopg2', ['python3-psycopg2'],
	sub { run_driver('psycopg2', '/usr/bin/python3', "$drivers/psycopg2_test.py") });
driver('SQLAlchemy', [ 'python3-psycopg2', 'python3-sqlalchemy' ],
	sub { run_driver('SQLAlchemy', '/usr/bin/python3', "$drivers/sqlalchemy_test.py") });
driver('Django', [ 'python3-psycopg2', 'python3-django' ],
	sub { run_driver('Django', '/usr/bin/python3', "$drivers/django_test.py") });
driver('Active Record', [ 'ruby-activerecord', 'ruby-pg' ],
	sub { run_driver('Active Record', '/usr/bin/ruby', "$drivers/activerecord_test.rb") });

# pgx v4 from Debian's Go sources, offline (GOPATH mode); the build cache is
# kept in SNOWFLAKE_GO_CACHE when it is writable (test/run makes it).
driver(
	'pgx',
	[ 'golang-go', 'golang-github-jackc-pgx-v4-dev' ],
	sub {
		my $cache = $ENV{SNOWFLAKE_GO_CACHE} // '/var/cache/snowflake-go';
		$cache = "$scratch/go-cache" unless -d $cache && -w $cache;
		local $ENV{GO111MODULE} = 'off';
		local $ENV{GOPATH} = '/usr/share/gocode';
		local $ENV{GOCACHE} = $cache;
		local $ENV{GOFLAGS} = '';
		my $started = time;
		my $built = IPC::Run::run([ 'go', 'build', '-o', "$scratch/pgx_v4", "$drivers/pgx_v4.go" ],
			'>', \my $out, '2>', \my $err);
		ok($built, "pgx: the program builds offline (" . (time - $started) . " s)") or diag($out . $err);
		run_driver('pgx', "$scratch/pgx_v4") if $built;
	});

# JDBC and JPA through Hibernate, each a single-file program run by the source
# launcher (compiled once, in memory)
my @jdbc = ('libpostgresql-jdbc-java', 'default-jdk-headless');
driver('JDBC', \@jdbc,
	sub { run_driver('JDBC (tcp)', 'java', '-cp', '/usr/share/java/postgresql.jar', "$drivers/JdbcTest.java") });
driver(
	'Hibernate',
	[ @jdbc, 'libhibernate3-java', 'libjavassist-java', 'libslf4j-java' ],
	sub {
		my $classpath = join ':', map { "/usr/share/java/$_.jar" } qw(postgresql hibernate-core
		  hibernate-entitymanager hibernate-commons-annotations geronimo-jpa_2.0_spec geronimo-jta-1.2-spec
		  dom4j commons-collections3 antlr javassist slf4j-api slf4j-nop);
		run_driver('Hibernate (tcp)', 'java', '-cp', $classpath, "$drivers/HibernateTest.java");
	});

SKIP:
{
	if (!-d "$npm_dir/node_modules/pg" || !-d "$npm_dir/node_modules/pg-copy-streams")
	{
		diag("SKIPPED: node-postgres is not installed in $npm_dir (test/run installs it from the npm registry)");
		skip('SKIPPED: node-postgres is not installed', 1);
	}
	local $ENV{NODE_PATH} = "$npm_dir/node_modules";
	run_driver('node-postgres', 'node', "$drivers/node_pg_test.js");
}
SKIP:
{
	if (!-d "$npm_dir/node_modules/knex")
	{
		diag("SKIPPED: knex is not installed in $npm_dir (test/run installs it from the npm registry)");
		skip('SKIPPED: knex is not installed', 1);
	}
	local $ENV{NODE_PATH} = "$npm_dir/node_modules";
	run_driver('knex', 'node', "$drivers/knex_test.js");
}

$node->stop;
done_testing();
