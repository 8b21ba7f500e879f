# Helpers shared by the TAP tests of the registry in test/t: a node's ids
# inserted one at a time under pgbench (120_registry_*), a registry of one
# worker id that a node can be cut off from and that can be restored from a
# base backup (123_registry_*), the registry's clock (129_registry_*).
package RegistryTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use SnowflakeTest;

our @EXPORT = qw(TRY_INSERT_SCHEMA start_load status latencies
  one_id_registry cut_off restore_registry registry_worker newest_ms registry_ms);

# A node's table of ids, and try_insert(): one id into it, or the error into errs.
use constant TRY_INSERT_SCHEMA => q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE errs (at timestamptz NOT NULL DEFAULT clock_timestamp(), sqlstate text, message text, detail text);
CREATE FUNCTION try_insert() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    INSERT INTO ids (id) VALUES (snowflake_nextval());
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    INSERT INTO errs (sqlstate, message, detail) VALUES (SQLSTATE, SQLERRM, detail);
END $$;
};
my $script;    # pgbench's script: made at the first start_load of a test file

# pgbench calling try_insert() at `rate` a second for `seconds`, in the background.
sub start_load
{
	my ($node, $seconds, $rate, @options) = @_;
	if (!defined $script)
	{
		$script = PostgreSQL::Test::Utils::tempdir() . '/try_insert.sql';
		append_to_file($script, "SELECT try_insert();\n");
	}
	my ($out, $err) = ('', '');
	my $run = IPC::Run::start(
		[ 'pgbench', '-n', '-f', $script, '-T', $seconds, '-R', $rate, '-c', '2', @options,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	return { run => $run, out => \$out, err => \$err };
}

sub status { return $_[0]->safe_psql('postgres', "SELECT $_[1] FROM snowflake_status"); }

# Latencies (ms) of a pgbench run's transactions, from its per-transaction log.
sub latencies
{
	my ($prefix) = @_;
	my @ms;
	for my $file (glob "$prefix.*")
	{
		for (split /\n/, slurp_file($file))
		{
			my @f = split / /;
			push @ms, $f[2] / 1000;
		}
	}
	return sort { $a <=> $b } @ms;
}

# A registry server that can be backed up, with a registry of one worker id
# and a role a node can be cut off by (cut_off).
sub one_id_registry
{
	my ($name, $window) = @_;
	my $registry = PostgreSQL::Test::Cluster->new($name);
	$registry->init(allows_streaming => 1);
	$registry->append_conf('postgresql.conf', "max_connections = 100\nlog_statement = none\n");
	$registry->start;
	$registry->safe_psql('postgres', 'CREATE ROLE cut SUPERUSER LOGIN');
	return ($registry, registry_create($registry, 'fleet', '[0,1)', '0', $window // '6s'));
}

# A node connecting as the role cut no longer reaches the registry, its
# background worker running on (a network partition).
sub cut_off
{
	my ($registry) = @_;
	$registry->safe_psql('postgres', q{ALTER ROLE cut NOLOGIN;
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'cut'});
	return;
}

# The registry's server replaced by its base backup, at the same address.
sub restore_registry
{
	my ($registry, $backup) = @_;
	$registry->stop('immediate');
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $registry->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $registry->backup_dir . "/$backup", $registry->data_dir);
	unlink $registry->data_dir . '/postmaster.pid';
	$registry->start;
	return;
}

sub registry_worker { return background_worker_pid($_[0], qr/snowflake registry worker/); }

# The newest id time (ms since 1970) a node has issued.
sub newest_ms
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT coalesce((extract(epoch FROM max(snowflake_to_timestamp(id))) * 1000)::bigint, 0) FROM ids});
}

# ms since 1970 by the registry's clock
sub registry_ms
{
	my ($server, $sql) = @_;
	return $server->safe_psql('fleet', $sql =~ /^SELECT/ ? $sql : "SELECT ($sql)::bigint");
}

1;
