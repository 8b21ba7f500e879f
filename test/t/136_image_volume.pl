# Loaded as CloudNativePG loads an image volume extension (PostgreSQL 18+,
# docs/image-volume.md): `make image-volume` lays the extension's files out
# as its image holds them (lib/snowflake.so, share/extension/: the control
# file and every SQL script, nothing else); `make image-oci` builds an OCI
# image of them with umoci (no container daemon), which is unpacked (umoci
# raw unpack) and must hold exactly those files, byte for byte. A server of
# a private copy of this installation with no snowflake of its own then
# loads the unpacked image from outside the installation, with the settings
# CloudNativePG writes (extension_control_path = '$system:<volume>/share',
# dynamic_library_path = '$libdir:<volume>/lib') and
# shared_preload_libraries = 'snowflake': the postmaster maps the volume's
# library, CREATE EXTENSION and ALTER EXTENSION UPDATE (1.0 to the default
# version) take the volume's scripts, the functions keep the control file's
# module_pathname ('$libdir/snowflake': PostgreSQL 18 searches
# dynamic_library_path for a name under $libdir/), and ids decode to the
# node's worker id and about now, increasing across a restart.
# PostgreSQL 15 and 17 have no extension_control_path: skipped there.
use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use File::Basename qw(basename dirname);
use File::Compare qw(compare);
use File::Find qw(find);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/
  or die 'pg_config --version names no major';
plan skip_all => "extension_control_path (loading from an image volume) is PostgreSQL 18's; this is $major"
  if $major < 18;

my $root = abs_path($ENV{TESTDIR} // '.');
my $tmp = abs_path(PostgreSQL::Test::Utils::tempdir);
my ($default) = slurp_file("$root/snowflake.control") =~ /^default_version = '([^']+)'/m
  or die 'no default_version in snowflake.control';
my ($module_pathname) = slurp_file("$root/snowflake.control") =~ /^module_pathname = '([^']+)'/m
  or die 'no module_pathname in snowflake.control';

# The files of a directory, relative to it, sorted ("lib/snowflake.so", ...).
sub files_under
{
	my ($dir) = @_;
	my @files;
	find({ no_chdir => 1, wanted => sub { push @files, substr($_, length($dir) + 1) if -f $_ } }, $dir);
	return [ sort @files ];
}

# --- The volume's layout, from the tree's make target.
my $volume = "$tmp/volume";
is(system("make -C '$root' -s image-volume IMAGE_VOLUME='$volume' >'$tmp/image-volume.log' 2>&1"), 0,
	'make image-volume lays the files out')
  or diag(slurp_file("$tmp/image-volume.log"));
my @expected = sort('lib/snowflake.so', 'share/extension/snowflake.control',
	map { 'share/extension/' . basename($_) } glob "$root/sql/snowflake--*.sql");
is_deeply(files_under($volume), \@expected,
	'the volume holds lib/snowflake.so and share/extension/ (the control file and every SQL script), nothing else');

# --- The OCI image of those files, unpacked: what the pod mounts.
my $mount = $volume;
my $umoci = `sh -c 'command -v umoci'`;
chomp $umoci;
SKIP:
{
	if ($umoci eq '')
	{
		# test/run installs umoci (Debian's package): there its absence is a failure
		fail('umoci is installed (test/run installs the Debian package umoci)') if defined $ENV{PG_MAJOR};
		skip 'umoci is not installed: no OCI image built', 6;
	}
	my $layout = "$tmp/oci";
	is(system("make -C '$root' -s image-oci IMAGE_VOLUME='$volume' OCI_LAYOUT='$layout' OCI_TAG=test"
			  . " >'$tmp/image-oci.log' 2>&1"), 0, 'make image-oci builds an OCI image with umoci')
	  or diag(slurp_file("$tmp/image-oci.log"));
	my $blob = sub { my ($digest) = @_; $digest =~ s/^sha256://; return "$layout/blobs/sha256/$digest" };
	my $index = slurp_file("$layout/index.json");
	my ($manifest_digest) = $index =~ /"digest":"(sha256:[0-9a-f]{64})"[^}]*"org\.opencontainers\.image\.ref\.name":"test"/
	  or die "no tag test in $layout/index.json: $index";
	my $manifest = slurp_file($blob->($manifest_digest));
	my @layers = $manifest =~ /"mediaType":"application\/vnd\.oci\.image\.layer\.v1\.tar\+gzip"/g;
	is(scalar @layers, 1, 'the image has one layer, no base image');
	my ($config_digest) = $manifest =~ /"config":\{[^}]*"digest":"(sha256:[0-9a-f]{64})"/
	  or die "no config in the manifest: $manifest";
	my $config = slurp_file($blob->($config_digest));
	chomp(my $machine = `uname -m`);
	my $architecture = { x86_64 => 'amd64', aarch64 => 'arm64' }->{$machine} // $machine;
	like($config, qr/"architecture":"\Q$architecture\E","os":"linux"/,
		"its configuration names this machine's architecture ($machine) and linux");

	my $rootfs = "$tmp/unpacked";
	is(system("umoci raw unpack --rootless --image '$layout:test' '$rootfs' >'$tmp/unpack.log' 2>&1"), 0,
		'umoci unpacks the image')
	  or diag(slurp_file("$tmp/unpack.log"));
	is_deeply(files_under($rootfs), \@expected, 'the unpacked image holds exactly the volume\'s files');
	is(scalar(grep { compare("$rootfs/$_", "$volume/$_") != 0 } @expected), 0, '... each the same bytes');
	$mount = $rootfs;
}

# --- A private copy of this installation with no snowflake of its own:
# Debian's layout (<usr>/lib/postgresql/NN/bin) or a tree of test/pg-toolchain
# (bin/ and debian/, relative to itself), as 124_upgrading copies it.
chomp(my $bindir = `pg_config --bindir`);
chomp(my $sharedir = `pg_config --sharedir`);
my $install;
if ($bindir =~ m{/lib/postgresql/(\d+)/bin$}
	&& abs_path($sharedir) eq abs_path("$bindir/../../../../share/postgresql/$1"))
{
	my $usr = abs_path("$bindir/../../../..");
	make_path("$tmp/usr/lib/postgresql", "$tmp/usr/share/postgresql");
	system('cp', '-a', "$usr/lib/postgresql/$1", "$tmp/usr/lib/postgresql/") == 0 or die 'copying the installation';
	system('cp', '-a', "$usr/share/postgresql/$1", "$tmp/usr/share/postgresql/") == 0 or die 'copying the installation';
	$install = "$tmp/usr/lib/postgresql/$1";
}
elsif (-d "$bindir/../debian")
{
	system('cp', '-a', dirname($bindir), "$tmp/tree") == 0 or die 'copying the installation';
	$install = "$tmp/tree";
}
die "an installation this test cannot copy ($bindir)" unless defined $install;
chomp(my $copied_lib = `'$install/bin/pg_config' --pkglibdir`);
chomp(my $copied_share = `'$install/bin/pg_config' --sharedir`);
abs_path($copied_lib) =~ /^\Q$tmp\E/ && abs_path($copied_share) =~ /^\Q$tmp\E/
  or die "the copy of the installation does not find its own files ($copied_lib, $copied_share)";
unlink "$copied_lib/snowflake.so", glob "$copied_share/extension/snowflake*";
ok(!-e "$copied_lib/snowflake.so" && !glob("$copied_share/extension/snowflake*"),
	'the installation holds no snowflake of its own');

# --- The server, configured as CloudNativePG configures a pod with the image
# mounted at $mount.
my $node = snowflake_node('cnpg', 7,
	"extension_control_path = '\$system:$mount/share'\n"
	  . "dynamic_library_path = '\$libdir:$mount/lib'\n",
	install_path => $install);
$node->start;
my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
my @mapped = grep { m{\s\Q$mount\E/lib/snowflake\.so$} } split /\n/, slurp_file("/proc/$postmaster/maps");
ok(scalar @mapped, "the postmaster preloaded the volume's library ($mount/lib/snowflake.so)");
is($node->safe_psql('postgres', "SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'"),
	$default, "the volume's control file is found (default version $default)");

$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($node->safe_psql('postgres', "SELECT DISTINCT probin FROM pg_proc WHERE probin IS NOT NULL AND pronamespace = 'public'::regnamespace"),
	$module_pathname, "the functions name the control file's module_pathname ($module_pathname), found on dynamic_library_path");
my $first = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
is( $node->safe_psql('postgres', qq{
SELECT d.worker_id = 7 AND abs(extract(epoch FROM d.ts - now())) < 60 FROM snowflake_decode($first) d}),
	't', 'an id decodes to worker 7 and about now');

# the volume's upgrade scripts: 1.0, then ALTER EXTENSION UPDATE
$node->safe_psql('postgres', 'CREATE DATABASE older');
$node->safe_psql('older', "CREATE EXTENSION snowflake VERSION '1.0'");
$node->safe_psql('older', 'ALTER EXTENSION snowflake UPDATE');
is($node->safe_psql('older', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	$default, "1.0 from the volume, updated to $default by the volume's scripts");

$node->restart;
my $after = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
cmp_ok($after, '>', $first, 'after a restart, ids are greater than every id before');
$node->stop;
done_testing();
