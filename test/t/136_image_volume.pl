# Loaded as CloudNativePG loads an image volume extension (PostgreSQL 18+,
# docs/image-volume.md), from the image built as CloudNativePG's own extension
# images are: from the Debian package SNOWFLAKE_DEB (test/run's package step
# runs this file with the package it built for the major), `make image-oci`
# lays the package's files out (lib/snowflake.so, share/extension/: the control
# file and every SQL script, licenses/<package>/: its copyright and LICENSE,
# nothing else) and builds an OCI image of them with umoci (no container
# daemon): FROM scratch, one layer, USER 65532:65532, the package's
# architecture, the org.opencontainers.image.* and io.cloudnativepg.image.base.*
# labels and annotations CloudNativePG's images carry, the tag
# <version>-<major>-<distribution>; unpacked (umoci raw unpack), it holds
# exactly those files, the library the package's bytes, with no RUNPATH or
# RPATH (and make refuses a package whose library has one). docker/cnpg/metadata.hcl
# (postgres-extensions-containers' form) names the same version. A server of a
# private copy of this installation with no snowflake of its own then loads
# the unpacked image from outside the installation, with the settings
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
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/
  or die 'pg_config --version names no major';
plan skip_all => "extension_control_path (loading from an image volume) is PostgreSQL 18's; this is $major"
  if $major < 18;
plan skip_all => 'the image is built from the Debian package: test/run\'s package step runs this file with SNOWFLAKE_DEB'
  unless $ENV{SNOWFLAKE_DEB};

my $root = abs_path($ENV{TESTDIR} // '.');
my $tmp = abs_path(PostgreSQL::Test::Utils::tempdir);
my $deb = abs_path($ENV{SNOWFLAKE_DEB});
my ($default) = slurp_file("$root/snowflake.control") =~ /^default_version = '([^']+)'/m
  or die 'no default_version in snowflake.control';
my ($module_pathname) = slurp_file("$root/snowflake.control") =~ /^module_pathname = '([^']+)'/m
  or die 'no module_pathname in snowflake.control';
chomp(my $package = `dpkg-deb -f '$deb' Package`);
chomp(my $deb_version = `dpkg-deb -f '$deb' Version`);
chomp(my $deb_architecture = `dpkg-deb -f '$deb' Architecture`);
is($package, "postgresql-$major-snowflake", "the package is ${major}'s ($package $deb_version $deb_architecture)");
my ($distribution) = slurp_file('/etc/os-release') =~ /^VERSION_CODENAME=(\w+)/m
  or die 'no VERSION_CODENAME in /etc/os-release';

# The files of a directory, relative to it, sorted ("lib/snowflake.so", ...).
sub files_under
{
	my ($dir) = @_;
	my @files;
	find({ no_chdir => 1, wanted => sub { push @files, substr($_, length($dir) + 1) if -f $_ } }, $dir);
	return [ sort @files ];
}

# --- The image, from the package.
my $volume = "$tmp/volume";
my $layout = "$tmp/oci";
my $source = 'https://example.org/snowflake';
is(system("make -C '$root' -s image-oci DEB='$deb' IMAGE_VOLUME='$volume' OCI_LAYOUT='$layout' IMAGE_SOURCE='$source'"
		  . " IMAGE_REVISION=test >'$tmp/image-oci.log' 2>&1"), 0, 'make image-oci builds the image from the package')
  or diag(slurp_file("$tmp/image-oci.log"));
my @expected = sort('lib/snowflake.so', 'share/extension/snowflake.control',
	(map { 'share/extension/' . basename($_) } glob "$root/sql/snowflake--*.sql"),
	"licenses/$package/copyright", "licenses/$package/LICENSE");
is_deeply(files_under($volume), \@expected,
	'its files: lib/snowflake.so, share/extension/ (the control file and every SQL script), licenses/<package>/, nothing else');

my $tag = "$default-$major-$distribution";
my $blob = sub { my ($digest) = @_; $digest =~ s/^sha256://; return "$layout/blobs/sha256/$digest" };
my $index = decode_json(slurp_file("$layout/index.json"));
my ($entry) = grep { ($_->{annotations}{'org.opencontainers.image.ref.name'} // '') eq $tag } @{ $index->{manifests} };
ok($entry, "the image is tagged <version>-<major>-<distribution>: $tag")
  or BAIL_OUT('tags: ' . join ' ', map { $_->{annotations}{'org.opencontainers.image.ref.name'} } @{ $index->{manifests} });
my $manifest = decode_json(slurp_file($blob->($entry->{digest})));
my $config = decode_json(slurp_file($blob->($manifest->{config}{digest})));
is(scalar @{ $manifest->{layers} }, 1, 'one layer, no base image (FROM scratch)');
is($config->{config}{User}, '65532:65532', 'a non-root user, 65532:65532, as CloudNativePG\'s extension images');
is("$config->{os}/$config->{architecture}", "linux/$deb_architecture", "linux on the package's architecture ($deb_architecture)");
my %labels = (
	'org.opencontainers.image.source' => $source,
	'org.opencontainers.image.url' => $source,
	'org.opencontainers.image.version' => $default,
	'org.opencontainers.image.revision' => 'test',
	'org.opencontainers.image.licenses' => 'PostgreSQL',
	'org.opencontainers.image.title' => "snowflake $default $major $distribution",
	'org.opencontainers.image.base.name' => 'scratch',
	'io.cloudnativepg.image.base.name' => "ghcr.io/cloudnative-pg/postgresql:$major-minimal-$distribution",
	'io.cloudnativepg.image.base.pgmajor' => $major,
	'io.cloudnativepg.image.base.os' => $distribution);
is_deeply({ map { $_ => $config->{config}{Labels}{$_} } keys %labels }, \%labels, 'the labels CloudNativePG\'s images carry');
is_deeply({ map { $_ => $manifest->{annotations}{$_} } keys %labels }, \%labels, '... also as the manifest\'s annotations');
like($config->{config}{Labels}{$_} // '', qr/\S/, "... and $_")
  for map { "org.opencontainers.image.$_" } qw(created description documentation vendor authors);
note("label $_=$config->{config}{Labels}{$_}") for sort keys %{ $config->{config}{Labels} };

my $rootfs = "$tmp/unpacked";
is(system("umoci raw unpack --rootless --image '$layout:$tag' '$rootfs' >'$tmp/unpack.log' 2>&1"), 0,
	'umoci unpacks the image')
  or diag(slurp_file("$tmp/unpack.log"));
is_deeply(files_under($rootfs), \@expected, 'the unpacked image holds exactly those files');
note("image: $_") for @{ files_under($rootfs) };
my $unpacked_deb = "$tmp/deb";
system('dpkg-deb', '-x', $deb, $unpacked_deb) == 0 or die "dpkg-deb -x $deb";
is(compare("$rootfs/lib/snowflake.so", "$unpacked_deb/usr/lib/postgresql/$major/lib/snowflake.so"), 0,
	"lib/snowflake.so is the package's");
is(compare("$rootfs/licenses/$package/LICENSE", "$root/LICENSE"), 0, "licenses/$package/LICENSE is LICENSE");
my $dynamic = `readelf -d '$rootfs/lib/snowflake.so'`;
like($dynamic, qr/\(NEEDED\)/, 'readelf reads the library\'s dynamic section');
unlike($dynamic, qr/\((RUNPATH|RPATH)\)/, 'the library has no RUNPATH or RPATH');

# a package whose library names a search path of its build machine: refused
SKIP:
{
	skip 'patchelf is not installed', 1 unless `sh -c 'command -v patchelf'`;
	system('cp', '-a', $unpacked_deb, "$tmp/deb-rpath") == 0 or die;
	system("patchelf --set-rpath /home/builder/pg/lib '$tmp/deb-rpath/usr/lib/postgresql/$major/lib/snowflake.so'") == 0 or die 'patchelf';
	make_path("$tmp/deb-rpath/DEBIAN");
	system("dpkg-deb -e '$deb' '$tmp/deb-rpath/DEBIAN' && dpkg-deb --root-owner-group -b '$tmp/deb-rpath' '$tmp/rpath.deb' >/dev/null") == 0
	  or die 'dpkg-deb -b';
	my $refused = system("make -C '$root' -s image-volume DEB='$tmp/rpath.deb' IMAGE_VOLUME='$tmp/volume-rpath' >'$tmp/rpath.log' 2>&1");
	ok($refused != 0 && slurp_file("$tmp/rpath.log") =~ /library search path/,
		'make image-volume refuses a package whose library has a RUNPATH') or diag(slurp_file("$tmp/rpath.log"));
}

# docker/cnpg/metadata.hcl: the extension as postgres-extensions-containers describes one
my $hcl = slurp_file("$root/docker/cnpg/metadata.hcl");
my %field = $hcl =~ /^\s*(\w+)\s*=\s*(\[[^\]]*\]|"[^"]*"|true|false|\{\})\s*$/mg;
is_deeply([ @field{qw(name sql_name licenses shared_preload_libraries create_extension)} ],
	[ '"snowflake"', '"snowflake"', '["PostgreSQL"]', '["snowflake"]', 'true' ],
	'metadata.hcl: name, sql_name, licenses, shared_preload_libraries, create_extension');
my @versions = $hcl =~ /^\s*(\w+) = \{\s*"(\d+)" = \{\s*package = "([^"]+)"\s*sql\s*= "([^"]+)"/mg;
ok(@versions >= 8, 'metadata.hcl: versions for bookworm and trixie');
while (my ($release, $version_major, $package_version, $sql) = splice @versions, 0, 4)
{
	is("$package_version $sql", "$deb_version $default", "metadata.hcl: $release $version_major: the package's version and default_version");
}
my $mount = $rootfs;

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
