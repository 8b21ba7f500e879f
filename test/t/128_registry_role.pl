# The registry's credentials, as docs/registry.md sets them up: nodes
# connect as a role made for them (snowflake_registry_grant), not a
# superuser, with scram-sha-256 over hostssl and sslmode=verify-full, the
# password in their OS user's password file (certificates made here). A
# password in snowflake.registry is refused, at start and at reload, and is
# never quoted. A wrong CA, sslmode=disable or no password claims nothing,
# and says why. The role reaches the registry's tables only through the
# functions a node calls (42501 for the rest).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $dir = PostgreSQL::Test::Utils::tempdir;
my $password = join '', map { ('a' .. 'z', 'A' .. 'Z', 0 .. 9)[ int rand 62 ] } 1 .. 32;

# --- certificates: a CA, the registry's certificate for 127.0.0.1 signed by
# it, and another CA
sub openssl
{
	my @command = ('openssl', @_);
	run_log(\@command) or BAIL_OUT("failed: @command");
	return;
}
my @ec_key = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1');
for my $ca ('ca', 'other_ca')
{
	openssl('req', '-new', '-x509', '-nodes', '-days', '2', @ec_key, '-subj', "/CN=snowflake test $ca",
		'-keyout', "$dir/$ca.key", '-out', "$dir/$ca.crt");
}
openssl('req', '-new', '-nodes', @ec_key, '-subj', '/CN=127.0.0.1', '-keyout', "$dir/server.key",
	'-out', "$dir/server.csr");
append_to_file("$dir/server.ext", "subjectAltName = IP:127.0.0.1\n");
openssl('x509', '-req', '-in', "$dir/server.csr", '-CA', "$dir/ca.crt", '-CAkey', "$dir/ca.key",
	'-CAcreateserial', '-days', '2', '-extfile', "$dir/server.ext", '-out', "$dir/server.crt");
chmod 0600, "$dir/server.key" or die "chmod: $!";

# --- the registry: TLS on 127.0.0.1, nodes by scram-sha-256 over hostssl only
my $registry = PostgreSQL::Test::Cluster->new('registry');
$registry->init;
$registry->append_conf('postgresql.conf',
	"listen_addresses = '127.0.0.1'\nssl = on\nssl_cert_file = '$dir/server.crt'\n"
	  . "ssl_key_file = '$dir/server.key'\nlog_connections = on\nlog_statement = none\n");
$registry->start;
my $superuser = $registry->safe_psql('postgres', 'SELECT current_user');
open my $hba, '>', $registry->data_dir . '/pg_hba.conf' or die "pg_hba.conf: $!";
print $hba "local all $superuser trust\nhostssl fleet snowflake_node 127.0.0.1/32 scram-sha-256\n";
close $hba;
reload_and_wait($registry);
my $port = $registry->port;

# the documented setup: the registry, then the nodes' role
$registry->safe_psql('postgres', 'CREATE DATABASE fleet');
my ($create) = readme_blocks('121_registry_copies.pl');
my ($role) = readme_blocks('128_registry_role.pl');
$registry->safe_psql('fleet', $create);
$registry->safe_psql('fleet', $role);
$registry->safe_psql('fleet', "ALTER ROLE snowflake_node PASSWORD '$password'");
is($registry->safe_psql('fleet',
		"SELECT rolsuper, rolpassword LIKE 'SCRAM-SHA-256\$%' FROM pg_authid WHERE rolname = 'snowflake_node'"),
	'f|t', 'the nodes\' role is no superuser, its password kept as a scram-sha-256 verifier');

# the nodes' password file: the OS user's, readable by it only
my $passfile = "$dir/pgpass";
for my $file ($passfile, "$dir/empty_pgpass")
{
	append_to_file($file, '');
	chmod 0600, $file or die "chmod: $!";
}
append_to_file($passfile, "127.0.0.1:$port:fleet:snowflake_node:$password\n");
my $conninfo = "host=127.0.0.1 port=$port dbname=fleet user=snowflake_node";
my $registry_name = "user=snowflake_node dbname=fleet host=127.0.0.1 port=$port";    # as logged: no secret
my $good = "$conninfo passfile=$passfile sslmode=verify-full sslrootcert=$dir/ca.crt";

# --- a password in snowflake.registry: refused at start
my $probe = registry_node('probe', "$good password=$password");
my $offset = -s $probe->logfile // 0;
ok(!$probe->start(fail_ok => 1), 'a password in snowflake.registry: the server does not start');
like(slurp_file($probe->logfile, $offset),
	qr/FATAL:  invalid value for parameter "snowflake.registry"\n.*DETAIL:  The connection string holds a password \(password\), which every role that may read settings .*\n.*HINT:  Keep the password in the password file of the server's operating-system user: ~\/.pgpass, or the file named by passfile/,
	'its log names the setting and the password file');

# --- a wrong CA, sslmode=disable, no password: nothing claimed, and the log
# says why (the probe restarted with each conninfo)
my $probe_conninfo;
sub claims_nothing
{
	my ($value, $why, $name) = @_;
	$probe_conninfo = $value;
	my $offset = -s $probe->logfile;
	$probe->append_conf('postgresql.conf', "snowflake.registry = '$value'\n");
	$probe->stop;    # when it runs
	$probe->start;
	$probe->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS snowflake');
	$probe->wait_for_log(
		qr/WARNING:  snowflake: no worker id could be claimed from the registry "\Q$registry_name\E": .*$why/, $offset);
	pass("$name: the log says why no worker id was claimed");
	my ($rc, $out, $err) = $probe->psql('postgres', 'SELECT snowflake_nextval()');
	like($err, qr/snowflake has no worker id\nDETAIL:  The registry has not granted a worker id to this server\./, "$name: no id is issued");
	like($probe->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status'), $why,
		"$name: snowflake_status shows why");
	return;
}
claims_nothing("$conninfo passfile=$passfile sslmode=verify-full sslrootcert=$dir/other_ca.crt",
	qr/certificate verify failed/, 'a certificate of another CA');

# --- a password at reload: refused, the value before stays
for my $case ([ "postgresql://snowflake_node:$password\@127.0.0.1:$port/fleet", 'password', 'a URI\'s password' ],
	[ "$good sslpassword=$password", 'sslpassword', 'sslpassword' ])
{
	my ($value, $keyword, $name) = @$case;
	$offset = -s $probe->logfile;
	$probe->append_conf('postgresql.conf', "snowflake.registry = '$value'\n");
	reload_and_wait($probe);
	$probe->wait_for_log(
		qr/LOG:  invalid value for parameter "snowflake.registry"\n.*DETAIL:  The connection string holds a password \($keyword\)/,
		$offset);
	pass("$name at reload: refused, naming the setting");
	is($probe->safe_psql('postgres', 'SHOW snowflake.registry'), $probe_conninfo, "$name at reload: the value before stays");
	$probe->append_conf('postgresql.conf', "snowflake.registry = '$probe_conninfo'\n");
}
reload_and_wait($probe);

# --- a connection string libpq cannot parse, at reload: refused with libpq's reason, the value before stays
$offset = -s $probe->logfile;
$probe->append_conf('postgresql.conf', "snowflake.registry = 'host=127.0.0.1 port'\n");
reload_and_wait($probe);
$probe->wait_for_log(
	qr/LOG:  invalid value for parameter "snowflake.registry"\n.*DETAIL:  The connection string cannot be parsed: missing "=" after "port" in connection info string\.\n.*HINT:  It is a libpq connection string/,
	$offset);
pass('a connection string that cannot be parsed, at reload: refused with libpq\'s reason');
is($probe->safe_psql('postgres', 'SHOW snowflake.registry'), $probe_conninfo, 'and the value before stays');
$probe->append_conf('postgresql.conf', "snowflake.registry = '$probe_conninfo'\n");
reload_and_wait($probe);

claims_nothing("$conninfo passfile=$passfile sslmode=disable",
	qr/no pg_hba.conf entry for host "127.0.0.1", user "snowflake_node", database "fleet", no encryption/,
	'sslmode=disable');
claims_nothing("$conninfo passfile=$dir/empty_pgpass sslmode=verify-full sslrootcert=$dir/ca.crt",
	qr/no password supplied/, 'no password in the password file');
is($registry->safe_psql('fleet', "SELECT count(*) FROM snowflake_registry.claims WHERE state <> 'free'"),
	'0', 'the registry granted nothing to it');

# --- a fleet as the role: three nodes claim and issue ids
my @fleet = map { registry_node("n$_", $good) } 1 .. 3;
$_->start for @fleet;
my %worker;
for my $node (@fleet)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	my $worker_id = wait_for_worker($node);
	is($node->safe_psql('postgres', 'SELECT (snowflake_decode(snowflake_nextval())).worker_id'),
		$worker_id, $node->name . ": issues ids under the worker id it claimed ($worker_id)");
	$worker{$worker_id} = 1;
}
is(scalar keys %worker, 3, 'three distinct worker ids');
is($registry->safe_psql('fleet',
		"SELECT count(*), bool_and(s.ssl), min(s.version) ~ '^TLSv1\\.[23]\$', bool_and(a.application_name = 'snowflake registry worker')
		   FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.usename = 'snowflake_node'"),
	'3|t|t|t', 'the registry serves the three as snowflake_node over TLS');
ok($registry->log_contains(qr/connection authorized: user=snowflake_node database=fleet .*SSL enabled/),
	'its log shows the role authorized over TLS');
# the probe, now with the documented conninfo, claims too
$probe->append_conf('postgresql.conf', "snowflake.registry = '$good'\n");
$probe->restart;
wait_for_worker($probe);
pass('the probe, given the password file and the right CA, claims a worker id');

# --- the role reaches the registry only through the node's functions
sub as_role
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $registry->psql('fleet', "\\set VERBOSITY verbose\n$sql", connstr => $good);
	return $rc == 0 ? $out : $err;
}
is(as_role('SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'), 'snowflake_node|t',
	'psql as snowflake_node, through the password file and verify-full');
is(as_role('SELECT life_change IS NOT NULL FROM snowflake_registry_life()'), 't', 'it may call the registry\'s life');
for my $refused ('SELECT count(*) FROM snowflake_registry.grants', 'SELECT count(*) FROM snowflake_registry.claims',
	'UPDATE snowflake_registry.grants SET until_ms = 0', 'DELETE FROM snowflake_registry.workers',
	'INSERT INTO snowflake_registry.grants VALUES (0, 99, \'x\', 0, 1, 0)',
	'UPDATE snowflake_registry.settings SET grace_until_ms = 0',
	'SELECT snowflake_registry_raise_floor(now())', 'SELECT snowflake_registry_end_grace()',
	'SELECT snowflake_registry_create()', 'SELECT snowflake_registry_release(0)',
	'SELECT * FROM snowflake_registry_check(\'pg_class\', \'oid\')', "SELECT snowflake_registry_grant('snowflake_node')")
{
	like(as_role($refused), qr/ERROR:  42501: permission denied for (schema snowflake_registry|function snowflake_registry_)/,
		"42501 for the role: $refused");
}

# --- no secret anywhere it can be read: the settings, the logs
unlike($_->safe_psql('postgres', 'SHOW snowflake.registry'), qr/\Q$password\E/, $_->name . ': SHOW holds no password')
  for $probe, @fleet;
for my $node ($registry, $probe, @fleet)
{
	unlike(slurp_file($node->logfile), qr/\Q$password\E/, $node->name . ': its log never quotes the password');
}

$_->stop for @fleet, $probe;
$registry->stop;
done_testing();
