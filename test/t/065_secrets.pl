# Secrets stay secret: every place a secret of the extension could leak is
# read and grepped for it (any case, as text and as raw bytes): a pg_monitor
# role's pg_settings, SHOW and current_setting(); pg_file_settings and
# pg_db_role_setting; pg_stat_statements (preloaded) and pg_stat_activity;
# the server log at DEBUG5 through a start, a reload and a rotation; pg_dump of
# the database (an index, a generated column and a view on public ids) and
# pg_dumpall --globals-only; every file of the data directory but the key file
# itself; and a role without privileges calling every function of the
# extension — each works, or fails with 42501 where docs/privileges.md says so.
# docs/privileges.md lists each secret and who can read it: its rows are the
# checks here. A new secret: add it to @secrets (and make the node hold it).
use strict;
use warnings FATAL => 'all';

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

sub random_hex { return join '', map { sprintf '%02X', int rand 256 } 1 .. $_[0]; }

# Every secret the node holds: [ what, its text, its bytes (or undef) ].
my $key0 = random_hex(16);    # AES-128
my $key1 = random_hex(32);    # AES-256
my $key2 = random_hex(24);    # AES-192, added by a rotation
my @secrets = map { [ "public id key $_->[0]", $_->[1], pack('H*', $_->[1]) ] }
  ([ 0, $key0 ], [ 1, $key1 ], [ 2, $key2 ]);

# Fails the test named $what if $output holds any secret.
sub no_secret
{
	my ($what, $output) = @_;
	my @found;
	for my $secret (@secrets)
	{
		my ($name, $text, $bytes) = @$secret;
		push @found, "$name (text)" if $output =~ /\Q$text\E/i;
		push @found, "$name (bytes)" if defined $bytes && index($output, $bytes) >= 0;
	}
	is(join(', ', @found), '', "$what: no secret");
	return;
}

my $node = snowflake_node(
	'secrets', 1,
	"shared_preload_libraries = 'snowflake, pg_stat_statements'\n"
	  . "snowflake.public_key_file = 'public_keys'\n"
	  . "log_min_messages = debug5\nlog_statement = all\n"
	  . "pg_stat_statements.track = all\npg_stat_statements.track_utility = on\n");
my $key_file = $node->data_dir . '/public_keys';

sub write_keys
{
	my ($text) = @_;
	open my $fh, '>', $key_file or die "$key_file: $!";
	print $fh $text;
	close $fh;
	chmod 0600, $key_file or die "$key_file: $!";
	return;
}

write_keys("# the keys of public ids\n1 $key1\n0 $key0\n");
my $offset = 0;
$node->start;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION snowflake;
	CREATE EXTENSION pg_stat_statements;
	CREATE ROLE monitor LOGIN IN ROLE pg_monitor;
	CREATE ROLE app LOGIN;
	GRANT CREATE ON SCHEMA public TO app;
	ALTER ROLE app SET search_path = public;
	ALTER DATABASE postgres SET work_mem = '8MB';
	SELECT snowflake_registry_create('[1,10)');  -- the registry functions' tables
});
my $ext = $node->safe_psql('postgres', "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'snowflake'");

sub psql_as
{
	my ($role, $sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', $sql, extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return ($out // '') . ($err // '');
}

# The application's work: public ids made, decoded, indexed, in a generated
# column and a view (the key-id forms), as the app role.
my $app_work = psql_as(
	'app', q{
	CREATE TABLE accounts (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), name text,
	                       public_id text GENERATED ALWAYS AS (snowflake_to_public(id, 0)) STORED);
	CREATE INDEX accounts_public ON accounts (snowflake_to_public(id, 1));
	CREATE VIEW public_accounts AS SELECT snowflake_to_public(id) AS public_id, name FROM accounts;
	INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 100) g;
	CREATE TABLE calls (id bigint PRIMARY KEY);  -- the table the function calls below are given
	SELECT snowflake_from_public(public_id) = id FROM accounts LIMIT 1;
	SELECT snowflake_from_public(snowflake_to_public(id, 1), 1) FROM accounts LIMIT 1;
	SELECT * FROM public_accounts LIMIT 1;
});
like($app_work, qr/^t$/m, 'the app makes and decodes public ids');
no_secret('the app\'s own outputs', $app_work);

# --- a pg_monitor role: settings, statistics, activity
my $settings = psql_as(
	'monitor', q{
	SELECT name, setting, reset_val, boot_val, sourcefile FROM pg_settings;
	SHOW ALL;
	SHOW snowflake.public_key_file;
	SHOW snowflake.public_key;
	SELECT name, current_setting(name) FROM pg_settings WHERE name LIKE 'snowflake.%';
	SELECT * FROM pg_db_role_setting;
});
like($settings, qr/snowflake\.public_key_file\|public_keys\|/, 'pg_monitor reads the setting: a path');
no_secret('pg_monitor: pg_settings, SHOW ALL, SHOW, current_setting(), pg_db_role_setting', $settings);
no_secret('a superuser: pg_settings, pg_file_settings',
	$node->safe_psql('postgres', 'SELECT * FROM pg_settings; SELECT * FROM pg_file_settings'));
like(psql_as('monitor', "SELECT pg_read_file('public_keys')"), qr/ERROR:  42501/,
	'pg_monitor cannot read the key file (42501)');

# a statement in progress in another session, seen by pg_monitor
my $busy = $node->background_psql('postgres', on_error_stop => 0);
$busy->query_until(qr/started/, "\\echo started\nSELECT snowflake_to_public(id), pg_sleep(60) FROM (SELECT 42 AS id) s;\n");
$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()")
  or die 'the busy session did not start';
my $activity = psql_as('monitor', 'SELECT * FROM pg_stat_activity');
like($activity, qr/snowflake_to_public\(id\), pg_sleep\(60\)/, 'pg_monitor sees the statements in progress');
no_secret('pg_monitor: pg_stat_activity', $activity);
$node->safe_psql('postgres', "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()");
$busy->quit;

my $statements = psql_as('monitor', 'SELECT query FROM pg_stat_statements');
like($statements, qr/snowflake_to_public/, 'pg_stat_statements holds the public id calls');
no_secret('pg_monitor: pg_stat_statements', $statements);
no_secret('a superuser: snowflake_status', $node->safe_psql('postgres', 'SELECT * FROM snowflake_status'));

# --- a role without privileges calling every function of the extension:
# those not granted to PUBLIC refuse it (42501), as docs/privileges.md lists
# them (the registry's among them: its operator's, and its nodes' that
# snowflake_registry_grant grants); the others work or refuse the arguments,
# never for privileges.
my %restricted = map { $_ => 1 } qw(snowflake_status snowflake_adopt_worker_id snowflake_repair_lease snowflake_repair_integer_ops
  snowflake_retire_public_key_id snowflake_registry_add_lives snowflake_registry_check snowflake_registry_claim
  snowflake_registry_create snowflake_registry_end_grace snowflake_registry_grant snowflake_registry_identity
  snowflake_registry_life snowflake_registry_present snowflake_registry_raise_floor snowflake_registry_release
  snowflake_registry_renew snowflake_registry_add_writers _snowflake_registry_unwritten _snowflake_registry_asked
  _snowflake_registry_written);
my %value = (
	'bigint' => '382741621101301760::bigint', 'snowflake' => '382741621101301760::snowflake',
	'integer' => '1', 'smallint' => '1::smallint', 'text' => "'x'", 'name' => "'id'::name",
	'timestamp with time zone' => "'2026-01-01 00:00:00+00'::timestamptz",
	'timestamp without time zone' => "'2026-01-01 00:00:00'::timestamp", 'date' => "'2026-01-01'::date",
	'interval' => "'1 day'::interval", 'regclass' => "'calls'::regclass", 'boolean' => 'false',
	'numeric' => '1::numeric', 'real' => '1::real', 'double precision' => '1::float8', 'json' => "'1'::json",
	'jsonb' => "'1'::jsonb", 'cstring' => "'1'::cstring", 'bytea' => "'\\x00'::bytea",
	'int4range' => "'[0,10)'::int4range", 'regrole' => "'app'::regrole");
my @functions = split /\n/, $node->safe_psql(
	'postgres', q{
	SELECT format('%s|%s|%s|%s', p.proname, p.prokind,
	              coalesce(array_to_string(array_agg(format_type(t, NULL) ORDER BY o), ','), ''),
	              has_function_privilege('app', p.oid, 'EXECUTE'))
	  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	  LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, o) ON true
	 WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
	 GROUP BY p.oid, p.proname, p.prokind ORDER BY 1});
my ($internal, @calls) = (0);
for my $function (@functions)
{
	my ($name, $kind, $types, $executable) = split /\|/, $function, -1;
	my @types = $types eq '' ? () : split /,/, $types;
	if (grep { !exists $value{$_} } @types)
	{
		$internal++;    # takes internal or a type's own value: not callable from SQL
		next;
	}
	die "$name: a procedure" if $kind eq 'p';
	my $call = "$ext.$name(" . join(', ', map { $value{$_} } @types) . ')';
	$call =~ s/'/''/g;
	push @calls, "('$name', '$types', '$executable'::boolean, '$call')";
}
# one session of the app role calls them all, each in its own subtransaction
my $results = psql_as(
	'app', qq{
	CREATE TEMP TABLE results (name text, types text, executable boolean, state text, output text);
	DO \$\$
	DECLARE
	    r record;
	    o text;
	BEGIN
	    FOR r IN SELECT * FROM (VALUES @{[ join(",\n", @calls) ]}) v(name, types, executable, call) LOOP
	        BEGIN
	            EXECUTE format('SELECT string_agg(x::text, '','') FROM (SELECT %s AS x) s', r.call) INTO o;
	            INSERT INTO results VALUES (r.name, r.types, r.executable, 'ok', o);
	        EXCEPTION WHEN OTHERS THEN
	            INSERT INTO results VALUES (r.name, r.types, r.executable, SQLSTATE, SQLERRM);
	        END;
	    END LOOP;
	END \$\$;
	SELECT format('%s|%s|%s|%s', name, types, executable, state) FROM results ORDER BY 1;
	SELECT output FROM results;
});
no_secret('the outputs and errors of every function called by the app role', $results);
my ($called, @unexpected) = (0);
my %refused;
for my $line (grep { /^\w+\|[^|]*\|[tf]\|\w+$/ } split /\n/, $results)
{
	my ($name, $types, $executable, $state) = split /\|/, $line;
	$called++;
	$refused{$name} = 1 if $state eq '42501';
	push @unexpected, "$name($types): $state" if ($executable eq 'f') != ($state eq '42501');
	push @unexpected, "$name($types): executable by PUBLIC though restricted" if $executable eq 't' && $restricted{$name};
	push @unexpected, "$name($types): $state (not called)" if $state =~ /^(3F000|42883|42P01)$/;
}
is($called, scalar @calls, 'the app role called every function that SQL can call');
ok($called > 80, "the app role called $called functions of the extension ($internal take internal values)");
is(join('; ', @unexpected), '', 'each works for the app role, or refuses it with 42501 exactly when not granted to PUBLIC');
is(join(' ', sort keys %refused), join(' ', sort keys %restricted), 'the functions refused to the app role are those docs/privileges.md restricts');
my $privileges = slurp_file('docs/privileges.md');
like($privileges, qr/\Q`$_\E/, "docs/privileges.md lists $_") for sort keys %restricted;

# --- the server log, at DEBUG5, through a reload that rotates the keys and a start
write_keys("2 $key2\n1 $key1\n0 $key0\n");
reload_and_wait($node);
like(psql_as('app', 'SELECT snowflake_to_public(1)'), qr/^[G-HJKMNP-Q]/m, 'the rotation is in effect');
$node->restart;
like(psql_as('app', 'SELECT snowflake_to_public(1)'), qr/^[G-HJKMNP-Q]/m, 'the keys are read at start');
my $log = slurp_file($node->logfile);
like($log, qr/DEBUG:  .*\n/, 'the log holds DEBUG5 lines');
like($log, qr/received SIGHUP, reloading configuration files/, 'the log holds the reload');
no_secret('the server log at DEBUG5 through start, reload and restart', $log);

# --- dumps
my $dump = $node->data_dir . '/../dump.sql';
$node->command_ok([ 'pg_dump', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-f', $dump ], 'pg_dump');
my $dumped = slurp_file($dump);
like($dumped, qr/snowflake_to_public\(id, 1\)/, 'the dump holds the index on public ids');
no_secret('pg_dump of the database', $dumped);
# pg_dumpall of the server's major: test/pg-toolchain's trees keep Debian's
# in debian/ (their bin/ has pg_dump, not pg_dumpall)
my $bindir = $node->config_data('--bindir');
my ($pg_dumpall) = grep { -x } ("$bindir/pg_dumpall",
	"$bindir/../debian/usr/lib/postgresql/" . $node->pg_version->major . '/bin/pg_dumpall');
$pg_dumpall //= 'pg_dumpall';
$node->command_ok([ $pg_dumpall, '--globals-only', '-h', $node->host, '-p', $node->port, '-f', $dump ],
	'pg_dumpall --globals-only');
no_secret('pg_dumpall --globals-only', slurp_file($dump));
unlink $dump;

# --- every file of the data directory but the key file, after a checkpoint
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
my ($files, @holding) = (0);
find(
	sub {
		return unless -f $_ && $File::Find::name ne $key_file;
		$files++;
		my $content = slurp_file($_);
		for my $secret (@secrets)
		{
			my ($name, $text, $bytes) = @$secret;
			push @holding, "$File::Find::name: $name"
			  if $content =~ /\Q$text\E/i || (defined $bytes && index($content, $bytes) >= 0);
		}
	},
	$node->data_dir);
ok($files > 500, "$files files of the data directory read");
is(join(', ', @holding), '', 'no file of the data directory but the key file holds a secret');

done_testing();
