# Helpers shared by the TAP tests in test/t: a preloaded node, the lease file
# and the id layout.
package SnowflakeTest;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Time::HiRes ();

our @EXPORT = qw(snowflake_node read_lease time_of log_count lease_writer_pid DEFAULT_EPOCH_MS
  registry_server registry_create registry_create_in registry_has_lives registry_conninfo readme_blocks registry_node wait_for_worker processes_of signal_node kill9_and_wait background_worker_pid release_1_0_install);

use constant DEFAULT_EPOCH_MS => 1704067200000;    # 2024-01-01 00:00:00 UTC

# A node with snowflake preloaded, the given worker id (undef: unset) and any
# further postgresql.conf lines; the extension is created once it runs.
# %init goes to Cluster::init (allows_streaming and the like), but for
# install_path, another installation's (Cluster::new).
sub snowflake_node
{
	my ($name, $worker_id, $extra_conf, %init) = @_;
	my $install_path = delete $init{install_path};
	my $node = PostgreSQL::Test::Cluster->new($name, defined $install_path ? (install_path => $install_path) : ());
	$node->init(%init);
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n"
		  . "log_statement = none\n"
		  # every statement that can wait is bounded: a wait bug fails, not hangs
		  . "statement_timeout = '120s'\n"
		  . (defined $worker_id ? "snowflake.worker_id = $worker_id\n" : '')
		  . ($extra_conf // ''));
	return $node;
}

# The lease file of a node as a hash { version, epoch_unix_ms, lease_ms, clock_ms,
# worker_id, fenced (a list), directory_host, directory_inode, layout,
# host_name (version 6; undef in 1.0's version 5), pending (the worker id a
# reload takes; undef: none), crc32c, text },
# undef when there is none; dies when it is not in the form the extension
# writes (the checksum is the extension's to check).
sub read_lease
{
	my ($node, $file) = @_;    # $file: 'lease' (the default) or 'fence', the fence's copy
	my $path = $node->data_dir . '/pg_snowflake/' . ($file // 'lease');
	return undef unless -e $path;
	my $text = slurp_file($path);
	# one 512-byte block: the text, then NULs (overwritten in place)
	length($text) == 512
	  && $text =~ /\A(snowflake\ lease\ ([56])\nepoch_unix_ms\ (\d+)\nlease_ms\ (\d+)\nclock_ms\ (\d+)\n
	               worker_id\ (\d+|none)\nfenced\ (none|\d+(?:\ \d+)*)\ndirectory\ (\d+)\ (\d+)\n
	               layout\ ([a-z0-9= ]+)\n(?:host_name\ ([!-~]{1,64})\n)?(?:pending\ (\d+)\n)?crc32c\ ([0-9a-f]{8})\n)\0+\z/x
	  && ($2 == 6) == defined $11
	  or die "unexpected lease file contents: \"$text\"";
	return {
		version         => $2,
		epoch_unix_ms   => $3,
		lease_ms        => $4,
		clock_ms        => $5,
		worker_id       => $6,
		fenced          => [ $7 eq 'none' ? () : split / /, $7 ],
		directory_host  => $8,
		directory_inode => $9,
		layout          => $10,
		host_name       => $11,
		pending         => $12,
		crc32c          => $13,
		text            => $1
	};
}

# The pid of a node's running background worker whose name matches $name
# (it has no database connection, so it is not in pg_stat_activity), or undef.
sub background_worker_pid
{
	my ($node, $name) = @_;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	return emulated_worker_pid($node, $postmaster)
	  if (readlink("/proc/$postmaster/exe") // '') =~ m{/qemu-[^/]+\z};
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		next unless defined $line && $line =~ /^(\d+) \(.*\) ([^Z]) (\d+) / && $3 == $postmaster;
		my $pid = $1;
		open my $cmd, '<', "/proc/$pid/cmdline" or next;
		my $cmdline = <$cmd> // '';
		close $cmd;
		return $pid if $cmdline =~ $name;
	}
	return undef;
}

# A server run under qemu-user (test/run's arm64 step: Debian's arm64
# PostgreSQL on this machine) shows the emulator's command line in /proc for
# every process, not the title PostgreSQL gives each in the emulated memory:
# the worker is then the postmaster's one child that pg_stat_activity does not
# list (it lists the backends, the auxiliary processes and the workers
# connected to a database), the same in three looks 200 ms apart (a process
# forked in between is listed by the next look, one exiting has left the list
# first and is looked at again), within 5 s; else undef (a node with a second
# such worker, the registry's, is not told apart here).
sub emulated_worker_pid
{
	my ($node, $postmaster) = @_;
	my $deadline = Time::HiRes::time() + 5;
	my @looks;
	while (Time::HiRes::time() < $deadline)
	{
		my %listed = map { $_ => 1 } split /\n/, $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity');
		my @unlisted;
		for my $stat (glob '/proc/[0-9]*/stat')
		{
			open my $fh, '<', $stat or next;
			my $line = <$fh>;
			close $fh;
			push @unlisted, $1
			  if defined $line && $line =~ /^(\d+) \(.*\) ([^Z]) (\d+) / && $3 == $postmaster && !$listed{$1};
		}
		@looks = () unless @unlisted == 1 && (!@looks || $looks[0] == $unlisted[0]);
		push @looks, $unlisted[0] if @unlisted == 1;
		return $looks[0] if @looks == 3;
		Time::HiRes::usleep(200_000);
	}
	return undef;
}

# The pid of a node's running lease writer, or undef.
sub lease_writer_pid { return background_worker_pid($_[0], qr/snowflake lease worker/); }

# The time field of an id, ms since the epoch; Perl integers are 64-bit.
sub time_of { return $_[0] >> 22; }

# The clock, ms since 1970.
push @EXPORT, 'ms_now';

sub ms_now { return int(Time::HiRes::time() * 1000); }

# The next id of a node, how far (ms) its time is ahead of the server's clock
# read right before it (the statement before, in the same session), and the
# clock read right after it (ms since the epoch, rounded down).
push @EXPORT, 'id_and_lead';

sub id_and_lead
{
	my ($node) = @_;
	return split /\|/, $node->safe_psql(
		'postgres', q{SELECT clock_timestamp() AS before \gset
SELECT id, (extract(epoch FROM snowflake_to_timestamp(id) - :'before'::timestamptz) * 1000)::int,
       floor(extract(epoch FROM after - snowflake_to_timestamp(0)) * 1000)::bigint
FROM (SELECT snowflake_nextval() AS id, clock_timestamp() AS after OFFSET 0) AS s});
}

# Asserts (three tests) that a node refuses to generate under `worker_id` as a
# copy: SQLSTATE 55000, the clone fence's reason, the hint's two ways out, and
# snowflake_status not generating, its worker_id NULL (the refused one is not in effect).
push @EXPORT, 'copy_refused';

sub copy_refused
{
	my ($node, $what, $worker_id) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', "\\set VERBOSITY verbose\nSELECT snowflake_nextval()",
		stdout => \$stdout, stderr => \$stderr);
	Test::More::like($stderr,
		qr/ERROR:  55000: this server is a copy of another server and may not issue ids under its worker id $worker_id/,
		"$what: refused with SQLSTATE 55000");
	Test::More::like($stderr, qr/HINT:  .*snowflake\.worker_id.*snowflake_adopt_worker_id\(\)/s,
		"$what: the hint gives both ways out");
	Test::More::like($node->safe_psql('postgres', 'SELECT generating, worker_id IS NULL, not_generating FROM snowflake_status'),
		qr/\Af\|t\|fenced: this data directory is a copy of another server's; worker id $worker_id is refused/,
		"$what: snowflake_status says it is not generating, under no worker id, and why");
	return;
}

push @EXPORT, qw(wait_for_lease wait_for_lease_line);

# Once the lease writer has recorded the worker id in effect (it runs once
# recovery has finished).
sub wait_for_lease { wait_for_lease_line($_[0], "worker_id $_[1]"); return; }

# Once a node's lease file has the line $line (e.g. "pending 52").
sub wait_for_lease_line
{
	my ($node, $line) = @_;
	$node->poll_query_until('postgres',
		"SELECT encode(pg_read_binary_file('pg_snowflake/lease'), 'escape') ~ '\\n$line\\n'")
	  or die "the lease file has no line \"$line\"";
	return;
}

push @EXPORT, 'set_worker_id';

# Sets snowflake.worker_id by a reload; returns once it is in effect: the lease
# records it (snowflake_status shows it only when it is not refused).
sub set_worker_id
{
	my ($node, $worker_id) = @_;
	$node->append_conf('postgresql.conf', "snowflake.worker_id = $worker_id\n");
	$node->reload;
	wait_for_lease($node, $worker_id);
	return;
}

push @EXPORT, 'duplicates';

# Both servers asked for 300,000 ids each at once, as fast as they answer
# (three batches of 100,000, about 75 ms of ids at the layout's cap, on both
# servers in the same milliseconds): how many ids both issued (and, in list
# context, how many the second issued). A refusal issues none.
sub duplicates
{
	my ($one, $other) = @_;
	my (%out, @runs);
	for my $node ($one, $other)
	{
		my $err = '';
		$out{ $node->name } = '';
		push @runs, IPC::Run::start(
			[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'), '-c',
			  join(' ', ('SELECT x FROM snowflake_nextvals(100000) x;') x 3) ],
			'>', \$out{ $node->name }, '2>', \$err);
	}
	$_->finish for @runs;
	my %seen;
	$seen{$_} = 1 for split /\n/, $out{ $one->name };
	my @second = split /\n/, $out{ $other->name };
	my $both = grep { $seen{$_} } @second;
	return wantarray ? ($both, scalar @second) : $both;
}

# A fleet's nodes under load (test/t/127, 129): the table ids filled by load(),
# its failures kept in errs.
push @EXPORT, qw(FLEET_SCHEMA start_fleet_load fleet_duplicates newcomer_settles overlaps start_and_claim);

use constant FLEET_SCHEMA => q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE errs (at timestamptz NOT NULL DEFAULT clock_timestamp(), sqlstate text, message text);
CREATE FUNCTION load() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ids (id) SELECT snowflake_nextvals(100);
EXCEPTION WHEN OTHERS THEN
    INSERT INTO errs (sqlstate, message) VALUES (SQLSTATE, SQLERRM);
END $$;
};

# pgbench calling load() (100 ids) 100 times a second, in the background, until stopped.
sub start_fleet_load
{
	my ($node) = @_;
	my $script = PostgreSQL::Test::Utils::tempdir() . '/load.sql';
	append_to_file($script, "SELECT load();\n");
	my ($out, $err) = ('', '');
	return IPC::Run::start([ 'pgbench', '-n', '-f', $script, '-T', '120', '-R', '100', '-c', '1',
		'-h', $node->host, '-p', $node->port, 'postgres' ], '>', \$out, '2>', \$err);
}

# Ids of all the nodes' ids tables: how many, and how many are duplicates.
sub fleet_duplicates
{
	my @nodes = @_;
	my %seen;
	my ($total, $duplicates) = (0, 0);
	for my $node (@nodes)
	{
		for (split /\n/, $node->safe_psql('postgres', 'SELECT id FROM ids'))
		{
			$total++;
			$duplicates++ if $seen{$_}++;
		}
	}
	return ($total, $duplicates);
}

# A newcomer to a fleet under load: waits for its worker id, then for its load
# (2,000 ids), stops every load, and counts the fleet's ids. Returns the
# worker id, the seconds from `since` to the grant, the ids and the duplicates.
sub newcomer_settles
{
	my ($newcomer, $since, $loads, @fleet) = @_;
	my $worker_id = wait_for_worker($newcomer);
	my $waited = Time::HiRes::time() - $since;
	$newcomer->poll_query_until('postgres', 'SELECT count(*) > 2000 FROM ids') or die 'no load on the new node';
	$_->kill_kill for @$loads;
	return ($worker_id, $waited, fleet_duplicates(@fleet, $newcomer));
}

# Pairs of grants of one worker id whose windows overlap, on a registry.
sub overlaps
{
	my ($server, $db) = @_;
	return $server->safe_psql($db, q{
		SELECT count(*) FROM snowflake_registry.grants a JOIN snowflake_registry.grants b
		    ON a.worker_id = b.worker_id AND a.fencing_epoch < b.fencing_epoch
		   AND a.from_ms < b.until_ms AND b.from_ms < a.until_ms});
}

# Starts a node and waits for its worker id; returns the worker id and the seconds it took.
sub start_and_claim
{
	my ($node) = @_;
	my $started = Time::HiRes::time();
	$node->start;
	$node->safe_psql('postgres', FLEET_SCHEMA);
	my $worker = wait_for_worker($node);
	return ($worker, Time::HiRes::time() - $started);
}

# Reloads a node's configuration and returns once the postmaster has read it
# (a new session sees its new load time): its complaints are in the log then.
push @EXPORT, 'reload_and_wait';

sub reload_and_wait
{
	my ($node) = @_;
	my $loaded = $node->safe_psql('postgres', 'SELECT pg_conf_load_time()');
	$node->reload;
	$node->poll_query_until('postgres', "SELECT pg_conf_load_time() > '$loaded'")
	  or die $node->name . ': the configuration was not reloaded';
	return;
}

# A server for registries: snowflake installed, not preloaded (a registry
# needs only the extension's SQL), room for many connections.
sub registry_server
{
	my ($name) = @_;
	my $server = PostgreSQL::Test::Cluster->new($name);
	$server->init;
	$server->append_conf('postgresql.conf', "max_connections = 250\nlog_statement = none\n");
	$server->start;
	return $server;
}

# A registry for a new fleet in a new database of the server: its worker ids
# (an int4range), quarantine and maximum window (default 6 s, the nodes'
# window here); no node holds a window of an earlier life, so its grace period
# is ended at once. Returns the conninfo nodes use.
sub registry_create
{
	my ($server, $db, $worker_ids, $quarantine, $max_window) = @_;
	$server->safe_psql('postgres', "CREATE DATABASE $db");
	$server->safe_psql($db, 'CREATE EXTENSION snowflake');
	registry_create_in($server, $db, $worker_ids, $quarantine, $max_window // '6s');
	$server->safe_psql($db, 'SELECT snowflake_registry_end_grace()') if registry_has_lives($server, $db);
	return registry_conninfo($server, $db);
}

# Whether the registry's extension knows its lives (1.1; 1.0 does not).
sub registry_has_lives
{
	my ($server, $db) = @_;
	return $server->safe_psql($db, "SELECT count(*) FROM pg_proc WHERE proname = 'snowflake_registry_end_grace'") > 0;
}

# snowflake_registry_create in a database with the extension (the maximum
# window only where the extension knows it).
sub registry_create_in
{
	my ($server, $db, $worker_ids, $quarantine, $max_window) = @_;
	$server->safe_psql($db, "SELECT snowflake_registry_create('$worker_ids', '$quarantine'"
		  . (registry_has_lives($server, $db) ? ", '$max_window'" : '') . ')');
	return;
}

sub registry_conninfo
{
	my ($server, $db) = @_;
	return 'host=' . $server->host . ' port=' . $server->port . " dbname=$db";
}

# The sql blocks of README.md and docs/*.md marked "<!-- run by test/t/$file -->", in order.
sub readme_blocks
{
	my ($file) = @_;
	my $root = $ENV{TESTDIR} // '.';
	my @blocks;
	for my $page ("$root/README.md", sort glob "$root/docs/*.md")
	{
		push @blocks, slurp_file($page) =~ /<!-- run by test\/t\/\Q$file\E -->\n```sql\n(.*?)```/gs;
	}
	die "no documented block is run by $file" unless @blocks;
	return @blocks;
}

# A node that claims its worker id from the registry at $conninfo: a 6 s
# window renewed every 500 ms unless $extra_conf says otherwise.
sub registry_node
{
	my ($name, $conninfo, $extra_conf, %init) = @_;
	return snowflake_node($name, undef,
		"snowflake.registry = '$conninfo'\n"
		  . "snowflake.registry_window = '6s'\n"
		  . "snowflake.registry_renew = '500ms'\n"
		  . ($extra_conf // ''), %init);
}

# Waits, after a server process was killed (its log from `offset` on), for the
# crash restart to end: the postmaster's "reinitializing", then "ready to
# accept connections". Read from the log: a psql started while the server
# still refuses connections can exit before the harness has written its query
# (IPC::Run then dies of the broken pipe, as a loaded run's 19 leg once did).
sub wait_for_crash_restart
{
	my ($node, $offset) = @_;
	return $node->wait_for_log(
		qr/all server processes terminated; reinitializing(?s:.*)database system is ready to accept connections/,
		$offset);
}
push @EXPORT, 'wait_for_crash_restart';

# Waits until the node has a worker id from the registry; returns it.
sub wait_for_worker
{
	my ($node, $not) = @_;
	my $condition = 'worker_id IS NOT NULL' . (defined $not ? " AND worker_id <> $not" : '');
	$node->poll_query_until('postgres', "SELECT $condition FROM snowflake_status")
	  or die $node->name . ': no worker id granted: '
	  . $node->safe_psql('postgres', 'SELECT registry_error FROM snowflake_status');
	return $node->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status');
}

# The pids of a running node: its postmaster, then every child of it.
sub processes_of
{
	my ($node) = @_;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	my @children;
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh>;
		close $fh;
		push @children, $1 if defined $line && $line =~ /^(\d+) \(.*\) \S (\d+) / && $2 == $postmaster;
	}
	return ($postmaster, @children);
}

sub alive
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $line = <$fh>;
	close $fh;
	return defined $line && $line !~ /^\d+ \(.*\) Z /;    # a zombie holds nothing
}

# kill -9 of the postmaster, then wait for its children to notice and exit
# (until then the old shared memory is in use) and for it to be reaped (until
# then its pid in postmaster.pid looks alive): no new postmaster starts before.
sub kill9_and_wait
{
	my ($node) = @_;
	my ($postmaster, @children) = processes_of($node);
	$node->kill9;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while ((grep { alive($_) } @children) || kill(0, $postmaster))
	{
		die 'the children of the killed postmaster do not exit' if time > $deadline;
		Time::HiRes::usleep(50_000);
	}
	return;
}

# Sends a signal (STOP, CONT) to every process of a node.
sub signal_node
{
	my ($node, $signal) = @_;
	my @pids = processes_of($node);
	kill $signal, @pids;
	return scalar @pids;
}

# How many lines of a node's log, from byte $offset on, match $regexp.
sub log_count
{
	my ($node, $regexp, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	my $count = () = $log =~ /$regexp/gm;
	return $count;
}


# Release 1.0 installed into a private copy of this installation: the tree of
# the commit CHANGELOG.md names for 1.0 (git archive of $SNOWFLAKE_GIT_DIR, which
# test/run passes, else the tree's own .git), built once per run under
# TESTDATADIR and installed into each caller's copy (Debian's layout,
# <usr>/lib/postgresql/NN/bin, or a tree of test/pg-toolchain). Returns the
# copy's install path (for Cluster::new's install_path) and the commit, or a
# reason to skip as the third value; a build that fails dies.
sub release_1_0_install
{
	require Cwd;
	require File::Basename;
	require File::Path;
	my $root = Cwd::abs_path($ENV{TESTDIR} // '.');
	my ($release) = slurp_file("$root/CHANGELOG.md") =~ /^## 1\.0\b[^\n]*\n(?:(?!^## ).*\n)*?.*\bcommit `?([0-9a-f]{40})\b/m
	  or die 'CHANGELOG.md names no commit of 1.0 (a line "commit <40 hex digits>" in its 1.0 section)';
	my $git_dir = $ENV{SNOWFLAKE_GIT_DIR};
	undef $git_dir if defined $git_dir && $git_dir eq '';
	if (!defined $git_dir)
	{
		$git_dir = `git -C '$root' rev-parse --absolute-git-dir 2>/dev/null`;
		chomp $git_dir;
		undef $git_dir if $? != 0 || $git_dir eq '';
	}
	return (undef, $release, "no git repository to take release 1.0 ($release) from: set SNOWFLAKE_GIT_DIR")
	  unless defined $git_dir;
	# a shallow clone lacks the release's commit
	system('git', '-c', 'safe.directory=*', "--git-dir=$git_dir", 'cat-file', '-e', "$release^{commit}");
	return (undef, $release, "the repository at $git_dir lacks release 1.0's commit $release (a shallow clone?)")
	  unless $? == 0;

	chomp(my $bindir = `pg_config --bindir`);
	chomp(my $sharedir = `pg_config --sharedir`);
	my $tmp = PostgreSQL::Test::Utils::tempdir;
	my $install;
	if ($bindir =~ m{/lib/postgresql/(\d+)/bin$}
		&& Cwd::abs_path($sharedir) eq Cwd::abs_path("$bindir/../../../../share/postgresql/$1"))
	{
		my $major = $1;
		my $usr = Cwd::abs_path("$bindir/../../../..");
		my $copy = "$tmp/usr";
		File::Path::make_path("$copy/lib/postgresql", "$copy/share/postgresql");
		system('cp', '-a', "$usr/lib/postgresql/$major", "$copy/lib/postgresql/") == 0 or die 'copying the installation';
		system('cp', '-a', "$usr/share/postgresql/$major", "$copy/share/postgresql/") == 0 or die 'copying the installation';
		symlink("$usr/include", "$copy/include") or die "$copy/include: $!";
		$install = "$copy/lib/postgresql/$major";
	}
	elsif (-d "$bindir/../debian")
	{
		system('cp', '-a', File::Basename::dirname($bindir), "$tmp/tree") == 0 or die 'copying the installation';
		$install = "$tmp/tree";
	}
	return (undef, $release, "an installation this test cannot copy ($bindir)") unless defined $install;
	my $pg_config = "$install/bin/pg_config";
	chomp(my $copied_share = `'$pg_config' --sharedir`);
	return (undef, $release, "a copy of this installation does not find its own files ($copied_share)")
	  unless $copied_share ne "" && Cwd::abs_path($copied_share) =~ /^\Q@{[ Cwd::abs_path($tmp) ]}\E/;
	unlink glob "$copied_share/extension/snowflake*";    # 1.0 as installed: none of later scripts

	my $source = ($ENV{TESTDATADIR} // $tmp) . "/snowflake-$release";
	if (!-f "$source/snowflake.so")
	{
		File::Path::rmtree($source);
		File::Path::make_path($source);
		system("git -c safe.directory='*' --git-dir='$git_dir' archive $release | tar -x -C '$source'") == 0
		  or die "git archive of $release";
		die "CHANGELOG's 1.0 commit ($release) is not release 1.0"
		  unless slurp_file("$source/snowflake.control") =~ /^default_version = '1\.0'/m;
		system("make -C '$source' -s -j2 PG_CONFIG='$pg_config' >'$source.log' 2>&1") == 0
		  or die "release 1.0 does not build: $source.log";
	}
	system("make -C '$source' -s PG_CONFIG='$pg_config' install >>'$source.log' 2>&1") == 0
	  or die "release 1.0 does not install: $source.log";
	return ($install, $release, undef);
}

# Debian's prometheus-postgres-exporter serving $node's metrics with the
# queries file $queries, connected as the role metrics (pg_monitor), and a
# scrape of it: a function that reads /metrics until the snowflake metrics
# are there and returns { metric name => value } (the snowflake_status_*
# metrics and pg_exporter_last_scrape_error). Returns (the exporter's
# IPC::Run harness, the scrape).
push @EXPORT, 'start_exporter';

sub start_exporter
{
	my ($node, $exporter, $queries) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($out, $err) = ('', '');
	local $ENV{DATA_SOURCE_NAME} =
	  'host=' . $node->host . ' port=' . $node->port . ' user=metrics dbname=postgres sslmode=disable';
	my $run = IPC::Run::start([ $exporter, "--web.listen-address=127.0.0.1:$port", "--extend.query-path=$queries" ],
		'>', \$out, '2>', \$err);
	my $scrape = sub {
		require HTTP::Tiny;
		my $http = HTTP::Tiny->new(timeout => 10);
		my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
		while (time < $deadline)
		{
			my $response = $http->get("http://127.0.0.1:$port/metrics");
			if ($response->{success} && $response->{content} =~ /^snowflake_status_generating/m)
			{
				my %metrics;
				for (split /\n/, $response->{content})
				{
					$metrics{$1} = $2 if /^(snowflake_status_\w+|pg_exporter_last_scrape_error)(?:\{[^}]*\})? (\S+)$/;
				}
				return \%metrics;
			}
			Time::HiRes::usleep(100_000);
		}
		die "no snowflake metrics on 127.0.0.1:$port: $err";
	};
	return ($run, $scrape);
}

1;
