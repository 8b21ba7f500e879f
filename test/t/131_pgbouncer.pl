# Pooling: Debian's pgbouncer in transaction and in statement mode in front of
# a node, under pgbench (20 clients, a pool of 4 server connections, a custom
# script inserting rows with DEFAULT snowflake_nextval()): every id unique,
# under the node's worker id, no failed transaction; and the snowflake settings
# a session can change are exactly those docs/integrations.md tells a pooled
# client not to SET.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use SnowflakeTest;

my $pgbouncer = '/usr/sbin/pgbouncer';
plan skip_all => 'pgbouncer is not installed' unless -x $pgbouncer;

my $clients = 20;
my $pool = 4;
my $seconds = 5;

my $node = snowflake_node('node', 31, "max_connections = 50\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), sid snowflake DEFAULT snowflake_nextval(),
                  mode text NOT NULL, backend int NOT NULL DEFAULT pg_backend_pid());
});

my $dir = PostgreSQL::Test::Utils::tempdir();
my $user = getpwuid($<);
append_to_file("$dir/users.txt", qq{"$user" ""\n});

for my $mode ('transaction', 'statement')
{
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $script = "$dir/insert-$mode.sql";
	append_to_file($script, "INSERT INTO ids (id, sid, mode) VALUES (DEFAULT, DEFAULT, '$mode');\n");
	my $conf = "$dir/pgbouncer-$mode.ini";
	append_to_file($conf, <<"EOC");
[databases]
postgres = host=@{[ $node->host ]} port=@{[ $node->port ]} dbname=postgres
one = host=@{[ $node->host ]} port=@{[ $node->port ]} dbname=postgres pool_size=1
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = $mode
default_pool_size = $pool
max_client_conn = 100
logfile = $dir/pgbouncer-$mode.log
pidfile = $dir/pgbouncer-$mode.pid
EOC
	my ($out, $err) = ('', '');
	my $bouncer = IPC::Run::start([ $pgbouncer, $conf ], '>', \$out, '2>', \$err);
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	until (system("psql -XAtq -h 127.0.0.1 -p $port -d postgres -c 'SELECT 1' >/dev/null 2>&1") == 0)
	{
		die "pgbouncer ($mode) does not answer: $err" if time > $deadline;
		usleep(100_000);
	}

	my ($ok, $bench, $bench_err) = (0, '', '');
	$ok = IPC::Run::run(
		[ 'pgbench', '-n', '-f', $script, '-c', $clients, '-j', 2, '-T', $seconds,
		  '-h', '127.0.0.1', '-p', $port, 'postgres' ],
		'>', \$bench, '2>', \$bench_err);
	ok($ok, "pgbench through pgbouncer in $mode mode exits 0") or diag($bench . $bench_err);
	my ($processed) = $bench =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $bench =~ /number of failed transactions: (\d+)/;
	is($failed, 0, "$mode mode: 0 failed transactions");
	unlike($bench_err, qr/ERROR|aborted/, "$mode mode: no client error");

	my ($rows, $distinct, $others, $backends) = split /\|/, $node->safe_psql('postgres', qq{
SELECT count(*), (SELECT count(DISTINCT i) FROM (SELECT id FROM ids WHERE mode = '$mode'
                                                  UNION ALL SELECT sid FROM ids WHERE mode = '$mode') AS u(i)),
       count(*) FILTER (WHERE (snowflake_decode(id)).worker_id <> 31 OR (snowflake_decode(sid)).worker_id <> 31),
       count(DISTINCT backend)
FROM ids WHERE mode = '$mode'});
	is($rows, $processed, "$mode mode: a row per transaction pgbench counted ($rows)");
	ok($rows > 1000, "$mode mode: more than 1,000 rows ($rows)");
	is($distinct, 2 * $rows, "$mode mode: $distinct ids (two a row), 0 duplicates");
	is($others, 0, "$mode mode: every id under worker id 31");
	ok($backends <= $pool, "$mode mode: $clients clients through $backends server connections (pool of $pool)");
	diag("$mode mode: $clients clients, $rows rows, $distinct ids, " . ($distinct - 2 * $rows) . ' duplicates');

	# no key can be left on a server connection for the next client (a pool
	# of one here): SET snowflake.public_key is refused, and the next client
	# sees no key
	my $key = '000102030405060708090a0b0c0d0e0f';
	my $through_pool = sub {
		my ($sql) = @_;
		my ($stdout, $stderr);
		IPC::Run::run([ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-h', '127.0.0.1', '-p', $port, '-d', 'one', '-c', $sql ],
			'>', \$stdout, '2>', \$stderr);
		chomp $stdout;
		return ($stdout, $stderr);
	};
	my (undef, $set_err) = $through_pool->("SET snowflake.public_key = '$key'");
	like($set_err, qr/0A000/, "$mode mode: SET snowflake.public_key is refused (0A000)");
	unlike($set_err, qr/$key/i, "$mode mode: and the refusal does not quote the key");
	my ($shown) = $through_pool->('SHOW snowflake.public_key');
	unlike($shown, qr/$key/i, "$mode mode: the next client given the connection sees no key");

	$bouncer->kill_kill;
}

my ($all, $all_distinct) = split /\|/, $node->safe_psql('postgres',
	'SELECT 2 * count(*), (SELECT count(DISTINCT i) FROM (SELECT id FROM ids UNION ALL SELECT sid FROM ids) AS u(i)) FROM ids');
is($all_distinct, $all, "both modes: $all ids, 0 duplicates");

# the one snowflake setting a session's SET reaches is the deprecated key,
# which refuses every value (as the docs say); the others are the server's
like(slurp_file(($ENV{TESTDIR} // '.') . '/docs/integrations.md'), qr/\*\*Settings a pooled client must not `SET`:\*\* none can take a value from a session/,
	'docs/integrations.md: a pooled client can SET no snowflake setting');
is($node->safe_psql('postgres',
	"SELECT string_agg(name, ',' ORDER BY name) FROM pg_settings WHERE name LIKE 'snowflake.%' AND context IN ('user', 'superuser')"),
	'', 'pg_settings lists no snowflake setting a session can SET');
my ($set_ret, undef, $set_stderr) = $node->psql('postgres', 'SET snowflake.public_key = \'00\'', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($set_stderr, qr/0A000/, 'SET snowflake.public_key (not in pg_settings) refuses any value (0A000)');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SET snowflake.worker_id = 32', extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/55P02/, 'a session cannot SET snowflake.worker_id (55P02)');

$node->stop;
done_testing();
