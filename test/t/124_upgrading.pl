# docs/upgrading.md, executed as printed, from release 1.0: the tree of the
# commit CHANGELOG.md names for 1.0 (git archive) is built and installed into
# a private copy of this installation; a node of it, claiming its worker id
# from a 1.0 registry on another server of it, makes ids in two databases and
# public ids under two keys of 1.0's snowflake.public_key. The registry's
# server takes the page's steps 2 and 4 first (the registry before its
# nodes), then every ```sh and ```sql block of the page's 1.0-to-1.1 section
# runs in order on the node (sh: one bash session per server as the server's
# OS user, psql reaching the server, pg_config naming the copy, sudo running
# the command as is; sql: in each database with the extension, or the
# registry's for its block, a "--> x" line the result compared). After every
# block: ids made then are above every id before and unique across the
# databases, and every public id made under 1.0 still decodes to its id and
# is still the id's public form; after the restart the node claims its
# worker id again. Also checked: ALTER EXTENSION UPDATE before the restart
# fails and changes nothing, as the page says.
# The repository is found at $SNOWFLAKE_GIT_DIR (test/run passes it), else
# the tree's own .git.
use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my $root = abs_path($ENV{TESTDIR} // '.');
# the version ALTER EXTENSION UPDATE reaches: this tree's (1.1's update, then any later one)
my ($current) = slurp_file("$root/snowflake.control") =~ /^default_version = '([^']+)'/m
  or die 'no default_version in snowflake.control';
my $page = 'docs/upgrading.md';

# release 1.0, built from its commit into a private copy of this installation
my ($install, $release, $skip) = release_1_0_install();
plan skip_all => $skip if defined $skip;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $pg_config = "$install/bin/pg_config";
pass("release 1.0 ($release) builds and installs into a copy of this installation");

# --- A 1.0 registry (not preloaded, as a registry needs only the SQL) and a
# 1.0 node claiming its worker id from it, with data and public ids under two
# keys.
my $registry = PostgreSQL::Test::Cluster->new('registry', install_path => $install);
$registry->init;
$registry->append_conf('postgresql.conf', "log_statement = none\n");
$registry->start;
$registry->safe_psql('postgres', 'CREATE DATABASE fleet');
$registry->safe_psql('fleet', 'CREATE EXTENSION snowflake');
$registry->safe_psql('fleet', "SELECT snowflake_registry_create('[0,1024)', '10 min')");
my $k0 = '2B7E151628AED2A6ABF7158809CF4F3C';
my $k1 = '000102030405060708090A0B0C0D0E0F1011121314151617';
my $node = snowflake_node('v10', undef,
	"timezone = 'UTC'\nsnowflake.public_key = '1:$k1, 0:$k0'\n"
	  . "snowflake.registry = '" . registry_conninfo($registry, 'fleet') . "'\n"
	  . "snowflake.registry_renew = '1s'\n",
	install_path => $install);
$node->start;
my @databases = ('postgres', 'app');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql($_, 'CREATE EXTENSION snowflake') for @databases;
my $worker_id = wait_for_worker($node);
for my $db (@databases)
{
	$node->safe_psql($db, q{
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), step text);
		CREATE TABLE public_ids (id bigint, public_id text, key_id int);
		INSERT INTO orders (step) SELECT 'made by 1.0' FROM generate_series(1, 1000);
		INSERT INTO public_ids SELECT id, snowflake_to_public(id), 1 FROM orders;
		INSERT INTO public_ids SELECT id, snowflake_to_public(id, '\x} . $k0 . q{'::bytea), 0 FROM orders;});
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), '1.0', "$db: at 1.0");
}
# 1.0's key set for a role (the page's "Before you start": 1.1 warns at its connections)
$node->safe_psql('postgres', "CREATE ROLE keyed LOGIN; ALTER ROLE keyed SET snowflake.public_key = '$k0'");
my ($rc, $out, $err) = $node->psql('postgres', 'SHOW snowflake.public_key_file');
like($err, qr/unrecognized configuration parameter/, 'the server runs 1.0: no snowflake.public_key_file');

my $highest = 0;
# Ids made now are above every id before and unique in all databases; every
# public id made under 1.0 decodes to its id and is its id's public form.
sub check_ids
{
	my ($when) = @_;
	my @ids;
	for my $db (@databases)
	{
		my $new = $node->safe_psql($db,
			"INSERT INTO orders (step) SELECT '" . ($when =~ s/'/''/gr) . "' FROM generate_series(1, 200) RETURNING id");
		my @new = split /\n/, $new;
		is(scalar(grep { $_ > $highest } @new), 200, "$when: $db: 200 new ids, each above every id before");
		push @ids, split /\n/, $node->safe_psql($db, 'SELECT id FROM orders');
		is($node->safe_psql($db, q{
			SELECT count(*) FILTER (WHERE snowflake_from_public(public_id) IS DISTINCT FROM id), count(*) FILTER (WHERE key_id = 1 AND snowflake_to_public(id) IS DISTINCT FROM public_id), count(*) FROM public_ids}),
			'0|0|2000', "$when: $db: 2000 public ids of 1.0 decode to their ids, and key 1's still encode so");
	}
	my %seen;
	is(scalar(grep { $seen{$_}++ } @ids), 0, "$when: " . scalar(@ids) . ' ids, none twice');
	$highest = (sort { $b <=> $a } @ids)[0];
	return;
}
check_ids('1.0 running');

# --- The page's blocks, in order.
my @blocks;
{
	my @lines = split /\n/, slurp_file("$root/$page");
	my ($section, $block) = (0);
	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];
		if ($block)
		{
			if ($line =~ /^```\s*$/) { push @blocks, $block if $section; undef $block; }
			else { $block->{text} .= "$line\n"; }
			next;
		}
		$section = $line =~ /^## 1\.0 to 1\.1/ ? 1 : $line =~ /^## / ? 0 : $section;
		if (my ($language) = $line =~ /^```(\w*)\s*$/)
		{
			my $mark = $i > 0 && $lines[ $i - 1 ] =~ /^<!--\s*(.*?)\s*-->\s*$/ ? $1 : '';
			$block = { language => $language, line => $i + 1, mark => $mark, text => '' };
		}
	}
}
ok(scalar(grep { $_->{language} eq 'sh' } @blocks) >= 4, "$page: its shell steps");

# the shell session: one bash per block, its variables carried to the next
my $shims = "$tmp/shims";
make_path($shims);
{
	open my $fh, '>', "$shims/sudo" or die "$shims/sudo: $!";
	print $fh "#!/bin/sh\n# as the server's OS user, who owns the installation's copy\nexec \"\$@\"\n";
	close $fh;
	chmod 0755, "$shims/sudo" or die;
}
# one session for the node, one for the registry's server
my %state;
for my $server ($node, $registry)
{
	my $file = "$tmp/shell-state-" . $server->name;
	open my $fh, '>', $file or die "$file: $!";
	print $fh 'export PATH=' . "'$install/bin:$shims:$ENV{PATH}'\n"
	  . "export PG_CONFIG='$pg_config' PGHOST='" . $server->host . "' PGPORT='" . $server->port . "' PGDATABASE=postgres\n"
	  . "unset PGDATA PGUSER PGSERVICE\n";
	close $fh;
	$state{ $server->name } = $file;
}
my $shells = 0;
sub run_shell
{
	my ($block, $server) = @_;
	my $state = $state{ ($server // $node)->name };
	my $script = "$tmp/block-" . ++$shells . '.sh';
	my $log = "$tmp/block-$shells.log";
	open my $fh, '>', $script or die "$script: $!";
	print $fh "set -eo pipefail\nset -a\n. '$state'\ncd '$root'\n$block->{text}\nexport -p >'$state.new' && mv '$state.new' '$state'\n";
	close $fh;
	my $status = system("bash '$script' </dev/null >'$log' 2>&1");
	return ($status, slurp_file($log));
}

# each statement of a sql block with the result printed after "-->"
sub run_sql
{
	my ($block, $where, $on, @in) = @_;
	($on, @in) = ($node, @databases) unless $on;
	my ($sql, @statements) = ('');
	for my $line (split /\n/, $block->{text})
	{
		my ($code, $expected) = $line =~ /^(.*?)(?:\s*-->\s*(.*?))?\s*$/;
		next if $code =~ /^\s*(--.*)?$/ && $sql eq '';
		$sql .= "$code\n";
		next unless $code =~ /;\s*(--.*)?$/;
		push @statements, [ $sql, $expected ];
		$sql = '';
	}
	for my $db (@in)
	{
		for (@statements)
		{
			my ($statement, $expected) = @$_;
			my ($rc, $out, $err) = $on->psql($db, $statement);
			my $name = "$where: $db: " . ($statement =~ s/\s+/ /gr =~ s/^\s+|\s+$//gr);
			$name = substr($name, 0, 120) . '...' if length $name > 123;
			is($rc, 0, "$name: succeeds") or diag($err);
			is($out, $expected, "$name: as printed") if defined $expected;
		}
	}
	return;
}

# The registry first: steps 2 and 4 on its server (it is not preloaded: no restart).
my ($install_step) = grep { $_->{language} eq 'sh' && $_->{text} =~ /make install/ } @blocks;
my ($update_step) = grep { $_->{language} eq 'sh' && $_->{text} =~ /ALTER EXTENSION snowflake UPDATE/ } @blocks;
for my $step ($install_step, $update_step)
{
	my $where = "$page:$step->{line} on the registry's server";
	my ($status, $output) = run_shell($step, $registry);
	is($status, 0, "$where: the commands succeed") or diag($output);
	check_ids("after $where");
}
is($registry->safe_psql('fleet', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $current,
	"the registry is at $current");
my $updated_ms = $registry->safe_psql('fleet', 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint');
ok($registry->poll_query_until('fleet',
		"SELECT renewed_ms > $updated_ms FROM snowflake_registry.workers WHERE worker_id = $worker_id"),
	'the 1.0 node renews its window at the updated registry');
is($node->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'), $worker_id,
	'the 1.0 node keeps its worker id from the updated registry');

for my $block (@blocks)
{
	my $where = "$page:$block->{line}";
	if ($block->{mark} =~ /^not run:\s*(.*)$/)
	{
		pass("$where: not run ($1)");
		next;
	}
	if ($block->{language} eq 'sql')
	{
		is($block->{mark}, 'run by test/t/124_upgrading.pl', "$where: marked as run here (015_readme skips it)");
		if ($block->{text} =~ /snowflake_registry_/) { run_sql($block, $where, $registry, 'fleet'); }
		else { run_sql($block, $where); }
	}
	elsif ($block->{language} eq 'sh')
	{
		my $restarts = $block->{text} =~ /pg_ctl restart/;
		my ($status, $output) = run_shell($block);
		is($status, 0, "$where: the commands succeed") or diag($output);
		if ($restarts)
		{
			$node->_update_pid(1);
			is(wait_for_worker($node), $worker_id, "$where: the restarted node claims its worker id again");
		}
		if ($block->{text} =~ /snowflake\.public_key_file = /)
		{
			# the page: 1.0 ignores the new line, and a reload under 1.0 only says so
			my $offset = -s $node->logfile;
			reload_and_wait($node);
			like(slurp_file($node->logfile, $offset), qr/invalid configuration parameter name "snowflake\.public_key_file"/,
				"$where: a reload under 1.0 says it does not know snowflake.public_key_file, as the page says");
		}
		if ($block->{text} =~ /make install/)
		{
			# the page: installing the files changes nothing in the running server,
			# and the update fails before the restart
			my ($rc, $out, $err) = $node->psql('app', 'ALTER EXTENSION snowflake UPDATE');
			like($err, qr/could not find function "[a-z_]+" in file ".*snowflake\.so"/,
				"$where: before the restart, ALTER EXTENSION UPDATE fails as the page says");
			is($node->safe_psql('app', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), '1.0',
				"$where: and changes nothing");
		}
		if ($restarts)
		{
			unlike($output, qr/WARNING|ERROR|FATAL/, "$where: the restarted server's log has no warning");
			like($node->safe_psql('postgres', 'SHOW snowflake.public_key_file'), qr/^public_keys$/,
				"$where: the server runs 1.1's library");
			my ($rc, $out, $err) = $node->psql('postgres', 'SELECT 1', extra_params => [ '-U', 'keyed' ]);
			like($err, qr/WARNING:  parameter "snowflake\.public_key" is no longer supported/,
				"$where: 1.0's key set for a role: a WARNING at its connections, as the page says");
			unlike($err, qr/\Q$k0\E/i, "$where: the warning does not quote the key");
			$node->safe_psql('postgres', 'ALTER ROLE keyed RESET snowflake.public_key');
		}
	}
	else
	{
		next;    # output shown, not a command
	}
	check_ids("after $where");
}

for my $db (@databases)
{
	is($node->safe_psql($db, "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $current, "$db: at $current");
}
is($node->safe_psql('app', "SELECT count(*) FROM orders WHERE step = 'made by 1.0'"), '1000', 'the rows of 1.0 are there');
$node->stop;
$registry->stop;
done_testing();
