# Backups with pgBackRest (Debian's pgbackrest; the repository on local disk,
# archive_command archive-push, the configuration of docs/ha-and-copies.md): a full
# and an incremental backup while a client inserts, then two restores started
# beside the running source — of the latest backup to the end of the archive,
# and to a point in time. Each refuses its source's worker id (the clone
# fence's SQLSTATE 55000), across a restart; given a worker id of its own by
# hand, or claiming one from a registry, it issues ids none of which the
# source issues.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(rmtree);
use Time::HiRes qw(usleep);
use SnowflakeTest;

# the first in PATH: on legs newer than bookworm's knows, trixie's (test/pg-tools)
my ($pgbackrest) = grep { -x } map { "$_/pgbackrest" } split /:/, $ENV{PATH};
$pgbackrest //= '/usr/bin/pgbackrest';
plan skip_all => 'pgbackrest is not installed' unless -x $pgbackrest;

my $dir = PostgreSQL::Test::Utils::tempdir();
my $conf = "$dir/pgbackrest.conf";
my $source = snowflake_node('source', 51,
	"archive_mode = on\narchive_command = '$pgbackrest --config=$conf --stanza=main archive-push %p'\n",
	allows_streaming => 1);

# the configuration of docs/ha-and-copies.md, its paths this test's
my ($documented) = slurp_file(($ENV{TESTDIR} // '.') . '/docs/ha-and-copies.md') =~ /```ini\n(\[global\]\n.*?)```/s
  or die 'docs/ha-and-copies.md shows no pgBackRest configuration';
my %paths = (
	'/var/lib/pgbackrest' => "$dir/repo",
	'/var/log/pgbackrest' => "$dir/log",
	'/var/spool/pgbackrest' => "$dir/spool",
	'/tmp/pgbackrest' => "$dir/lock",
	'/var/lib/postgresql/15/main' => $source->data_dir,
	'/var/run/postgresql' => $source->host,
	'5432' => $source->port);
my $config = $documented;
$config =~ s/\Q$_\E/$paths{$_}/g for keys %paths;
$config =~ s/^\[global\]\n/[global]\nlock-path=$dir\/lock\n/m;
append_to_file($conf, $config);
note "pgbackrest.conf:\n$config";

$source->start;
$source->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), at timestamptz NOT NULL DEFAULT clock_timestamp());
});

sub backrest
{
	my (@args) = @_;
	my ($stdout, $stderr);
	IPC::Run::run([ $pgbackrest, "--config=$conf", '--stanza=main', @args ], '>', \$stdout, '2>', \$stderr)
	  or die "pgbackrest @args: $stdout$stderr";
	return $stdout;
}
# A pgBackRest knows the majors released before it (bookworm's 2.45 up to 16,
# trixie's 2.60 up to 19): a newer server's leg skips, saying so, and any other
# failure fails the test
if (!eval { backrest('stanza-create'); 1 })
{
	my $why = $@;
	my ($unsupported) = $why =~ /(\[VersionNotSupportedError\][^\n]*)/ or die $why;
	$source->stop;
	plan skip_all => 'this pgBackRest does not support PostgreSQL ' . $source->pg_version->major . ": $unsupported";
}
backrest('check');

# a client inserting about 200 rows a second while the backups run
my $script = "$dir/insert.sql";
append_to_file($script, "INSERT INTO ids DEFAULT VALUES;\n");
my ($load_out, $load_err) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 2, '-R', 200, '-T', 600, '-h', $source->host, '-p', $source->port, 'postgres' ],
	'>', \$load_out, '2>', \$load_err);
sub rows { return $source->safe_psql('postgres', 'SELECT count(*) FROM ids'); }
sub rows_grow
{
	my $from = rows();
	$source->poll_query_until('postgres', "SELECT count(*) > $from + 100 FROM ids") or die "the load stopped: $load_err";
}

for my $type ('full', 'incr')
{
	rows_grow();
	my $before = rows();
	my $start = time;
	backrest('backup', "--type=$type");
	my $after = rows();
	ok($after > $before, "the $type backup while a client inserts ($before rows before it, $after after)");
	diag(sprintf '%s backup: %d s, %d rows inserted meanwhile', $type, time - $start, $after - $before);
}
like(backrest('info'), qr/full backup: .*incr backup: /s, 'pgbackrest info lists the full and the incremental backup');

# a point in time past both backups, with rows on either side of it
rows_grow();
my $target = $source->safe_psql('postgres', 'SELECT now()');
rows_grow();
$load->kill_kill;
my $source_rows = rows();
my $walfile = $source->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$source->poll_query_until('postgres', "SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';

sub refused
{
	my ($node, $what) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()", stdout => \$stdout, stderr => \$stderr);
	like($stderr, qr/ERROR:  55000: this server is a copy of another server and may not issue ids under its worker id 51/,
		"$what: refuses the source's worker id 51 (SQLSTATE 55000)");
}

# both asked for 500 ids at a time, four times each: ids issued by both, and by the copy
sub issued_by_both
{
	my ($copy) = @_;
	my %seen;
	my ($both, $of_copy) = (0, 0);
	for my $round (1 .. 4)
	{
		for my $node ($source, $copy)
		{
			my ($stdout, $stderr);
			$node->psql('postgres', 'SELECT x FROM snowflake_nextvals(500) x', stdout => \$stdout, stderr => \$stderr);
			for my $id (split /\n/, $stdout // '')
			{
				$both++ if ($seen{$id} // $node) ne $node;
				$seen{$id} = $node;
				$of_copy++ if $node == $copy;
			}
		}
	}
	return ($both, $of_copy);
}

# pgbackrest restore into a new data directory, started beside the source on another port
sub restore
{
	my ($name, @options) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	$copy->init;    # a port and a socket of its own; the directory is replaced
	rmtree($copy->data_dir);
	mkdir $copy->data_dir, 0700;
	backrest('restore', '--pg1-path=' . $copy->data_dir, '--archive-mode=off', @options);
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port . "\nunix_socket_directories = '" . $copy->host . "'\n");
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die "$name: recovery did not end";
	return $copy;
}

my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[60,70)', '1s');

for my $case ([ 'latest', 'the latest backup to the end of the archive', [] ],
	[ 'pitr', "a point in time ($target)", [ '--type=time', "--target=$target", '--target-action=promote' ] ])
{
	my ($name, $what, $options) = @$case;
	my $copy = restore($name, @$options);
	my ($rows, $after_target, $max) = split /\|/, $copy->safe_psql('postgres', qq{
SELECT count(*), count(*) FILTER (WHERE at > '$target'), max(id) FROM ids});
	if ($name eq 'latest')
	{
		is($rows, $source_rows, "$what: every row of the source ($rows)");
	}
	else
	{
		is($after_target, 0, "$what: no row inserted after the target");
		my $before = $source->safe_psql('postgres', "SELECT count(*) FROM ids WHERE at <= '$target'::timestamptz - '1s'::interval");
		ok($rows >= $before && $rows < $source_rows, "$what: the rows up to the target ($rows of $source_rows)");
	}
	refused($copy, $what);
	my ($both, $of_copy) = issued_by_both($copy);
	is($of_copy, 0, "$what, beside its running source: 0 ids from it");
	$copy->restart;
	refused($copy, "$what, restarted");

	if ($name eq 'latest')
	{
		$copy->append_conf('postgresql.conf', "snowflake.worker_id = 52\n");
		$copy->reload;
		$copy->poll_query_until('postgres', 'SELECT worker_id = 52 FROM snowflake_status') or die 'worker id 52 not taken';
	}
	else
	{
		# claiming from a registry instead (a restart: snowflake.registry is read at start)
		$copy->append_conf('postgresql.conf', "snowflake.worker_id = -1\nsnowflake.registry = '$conninfo'\n"
			  . "snowflake.registry_window = '6s'\nsnowflake.registry_renew = '500ms'\n");
		$copy->restart;
		wait_for_worker($copy);
	}
	my $worker_id = $copy->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status');
	isnt($worker_id, 51, "$what: a worker id of its own ($worker_id)");
	($both, $of_copy) = issued_by_both($copy);
	is($of_copy, 2000, "$what: under worker id $worker_id it issues ids beside the source");
	is($both, 0, "$what: 0 ids issued by both");
	ok($copy->safe_psql('postgres', 'SELECT snowflake_nextval()') > $max, "$what: above every id it restored");
	diag("restore of $what: $rows rows, $of_copy ids under worker id $worker_id, $both duplicates");
	$copy->stop;
}

$source->stop;
done_testing();
