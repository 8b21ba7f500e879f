# The Docker image of docs/containers.md, built and run without a container daemon
# (none runs here), as root: test/run's package step runs it on the 15 package,
#   SNOWFLAKE_DEB=.../postgresql-15-snowflake_1.2_amd64.deb prove test/docker-image.pl
# The official postgres image cannot be pulled here: its stand-in
# (test/docker-standin/build: Debian bookworm's postgresql-15 laid out as the official
# image lays out its own, an entrypoint written from its documented behaviour) is
# stored under the name docker/Dockerfile's FROM gives, in a buildah storage of its own
# (SNOWFLAKE_IMAGE_CACHE, default /var/cache/snowflake-images: made once). Then:
# - the page's `docker build` line, as printed, built by buildah (--isolation chroot)
#   with the package in a copy of docker/;
# - the image pushed to an OCI layout and unpacked by umoci (as root: owners kept);
# - the page's `docker run` line for 15 and its compose service, as printed, each run
#   as a runtime runs a container: the image's entrypoint and the given options, as
#   root, chrooted into the unpacked root in new mount, PID, UTS, IPC and network
#   namespaces (unshare), the volume bind-mounted at its target, /proc, /dev and
#   /dev/shm of its own, a host name of its own (the container id's, or --hostname);
# - over the unix socket in the root's /run/postgresql: the postmaster runs as the
#   postgres user, the init script created the extension, snowflake_nextval() issues
#   under the worker id given, the library is preloaded from postgresql.conf; without
#   POSTGRES_PASSWORD the entrypoint refuses to initialise; the container recreated
#   (a new root from the image, a new host name, the same volume) runs no init script
#   again and issues ids greater than before.
use strict;
use warnings FATAL => 'all';

use Cwd qw(abs_path);
use File::Basename qw(dirname basename);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use POSIX qw(WNOHANG);
use Text::ParseWords qw(shellwords);
use Time::HiRes qw(sleep time);
use Test::More;

plan skip_all => 'builds and runs images as root (test/run\'s package step runs it)' if $> != 0;
my $deb = $ENV{SNOWFLAKE_DEB}
  or plan skip_all => 'SNOWFLAKE_DEB names no Debian package (test/run\'s package step gives the 15 one)';
$deb = abs_path($deb);
my ($package, $major) = basename($deb) =~ /^(postgresql-(\d+)-snowflake)_/
  or die "$deb: not a postgresql-NN-snowflake package";
plan skip_all => "the stand-in for the official image is PostgreSQL 15's; the package is ${major}'s"
  if $major != 15;

my $root = abs_path(dirname(__FILE__) . '/..');
my $cache = $ENV{SNOWFLAKE_IMAGE_CACHE} // '/var/cache/snowflake-images';
my $storage = "$cache/storage";
my @buildah = ('buildah', '--root', $storage, '--runroot', "$storage.run", '--storage-driver', 'vfs');
my $tmp = tempdir('snowflake-docker-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $tmp;
my $psql = "/usr/lib/postgresql/$major/bin/psql";
sub slurp { my ($file) = @_; open my $fh, '<', $file or die "$file: $!"; local $/; return <$fh> }
# a file of /proc, or '' once its process is gone
sub proc_read { my ($file) = @_; open my $fh, '<', $file or return ''; local $/; return <$fh> // '' }
sub run_logged
{
	my ($log, @command) = @_;
	my $pid = fork // die "fork: $!";
	if (!$pid)
	{
		open STDOUT, '>', $log or die; open STDERR, '>&', \*STDOUT or die;
		exec @command or die "$command[0]: $!";
	}
	waitpid $pid, 0;
	return $?;
}
my ($default) = slurp("$root/snowflake.control") =~ /^default_version = '([^']+)'/m;

# --- The docs: the `docker build` line, the `docker run` lines and the compose service.
my $page = slurp("$root/docs/containers.md");
my ($section) = $page =~ /^## Docker and compose\n(.*?)^## /ms or die 'docs/containers.md: no "Docker and compose" section';
my @blocks = $section =~ /^```(\w*)\n(.*?)^```/msg;
my (@shell, $compose);
while (my ($language, $body) = splice @blocks, 0, 2)
{
	$compose = $body if $language eq 'yaml';
	push @shell, grep { /\S/ } split /\n/, $body =~ s/\\\n\s*/ /gr if $language eq 'sh';
}
my ($build_line) = grep { /^docker build / } @shell;
my @run_lines = grep { /^docker run / } @shell;
ok(defined $build_line, 'the page has a docker build line') or BAIL_OUT('no docker build line');
my ($run_15) = grep { m{-v \S+:/var/lib/postgresql/data } && / snowflake-postgres:15 / } @run_lines;
my ($run_18) = grep { / snowflake-postgres:18 / } @run_lines;
ok(defined $run_15, 'the page has a docker run line for 15 with its volume at /var/lib/postgresql/data')
  or BAIL_OUT('no docker run line for 15');
like($run_18 // '', qr{ -v \S+:/var/lib/postgresql(?=\s)}, '... and one for 18 with its volume at /var/lib/postgresql (18 refuses one at .../data)');
like($run_15, qr/ -e POSTGRES_PASSWORD=\S+/, '... each with POSTGRES_PASSWORD (the entrypoint initialises nothing without it)');
like($run_18 // '', qr/ -e POSTGRES_PASSWORD=\S+/, '... (18\'s too)');

# --- The stand-in for the official image, in the cache.
my $started = time;
is(run_logged("$tmp/standin.log", 'timeout', '1500', "$root/test/docker-standin/build", $storage), 0,
	'the stand-in for postgres:15-bookworm is in the buildah storage (test/docker-standin/build)')
  or BAIL_OUT(slurp("$tmp/standin.log"));
diag(sprintf 'stand-in: %.0f s%s', time - $started, slurp("$tmp/standin.log") =~ /mmdebstrap/ ? ' (made now: mmdebstrap)' : ' (cached)');

# --- docker build, as printed: buildah build in a copy of docker/ holding the package.
my @build = shellwords($build_line);
splice @build, 0, 2;  # docker build
my $context = pop @build;
is($context, 'docker/', 'the build context is docker/');
make_path("$tmp/context");
system('cp', '-a', "$root/docker/.", "$tmp/context/") == 0 or die 'copying docker/';
system('cp', $deb, "$tmp/context/") == 0 or die "copying $deb";
my %build_args = map { /^PG_MAJOR=|^DEBIAN_RELEASE=/ ? split(/=/, $_, 2) : () } @build;
my ($tag) = map { $build[$_ + 1] } grep { $build[$_] eq '-t' } 0 .. $#build;
$started = time;
# (one layer over the base: a layer of buildah's vfs storage is a whole copy of the root;
# the image is removed at the end, the stand-in kept)
END { system("@buildah rmi -f '$tag' >/dev/null 2>&1; @buildah rmi --prune >/dev/null 2>&1") if $tag }
is(run_logged("$tmp/build.log", 'timeout', '600', @buildah, 'build', '--isolation', 'chroot', '--pull=never',
		'--squash', '--format', 'oci', @build, "$tmp/context"), 0, "buildah builds it: $build_line")
  or diag(slurp("$tmp/build.log"));
diag(sprintf 'build: %.0f s', time - $started);
$started = time;

# the image, unpacked as a runtime unpacks it (umoci, as root: owners kept)
is(system("@buildah push --quiet --disable-compression '$tag' 'oci:$tmp/oci:run' >'$tmp/push.log' 2>&1"), 0, "buildah pushes $tag to an OCI layout")
  or diag(slurp("$tmp/push.log"));
my $image_config = `skopeo inspect --config 'oci:$tmp/oci:run' 2>&1`;
my ($entrypoint) = $image_config =~ /"Entrypoint":\s*\[\s*"([^"]+)"\s*\]/;
is($entrypoint, 'docker-entrypoint.sh', "the image keeps its base's entrypoint");
my %image_env = map { split /=/, $_, 2 } $image_config =~ /"Env":\s*\[(.*?)\]/s ? ($1 =~ /"([^"]*)"/g) : ();
is($image_env{PGDATA}, '/var/lib/postgresql/data', '... and its PGDATA');

system("umoci unpack --image '$tmp/oci:run' '$tmp/image' >'$tmp/unpack.log' 2>&1") == 0
  or BAIL_OUT('umoci unpack: ' . slurp("$tmp/unpack.log"));
my $image_root = "$tmp/image/rootfs";
diag(sprintf 'push and unpack: %.0f s', time - $started);
# a container's root: the image's, under an overlay of its own (as a runtime's
# writable layer), mounted here and unmounted at the end
my (@overlays, $containers);
sub container_root
{
	my $dir = "$tmp/container-" . ++$containers;
	make_path("$dir/upper", "$dir/work", "$dir/rootfs");
	system('mount', '-t', 'overlay', 'overlay', '-o', "lowerdir=$image_root,upperdir=$dir/upper,workdir=$dir/work", "$dir/rootfs") == 0
	  or die "mounting the overlay of $dir";
	push @overlays, "$dir/rootfs";
	return "$dir/rootfs";
}
END { system('umount', $_) for reverse @overlays }
my $rootfs = $image_root;
like(`chroot '$rootfs' dpkg-query -W -f '\${Status} \${Version}' $package 2>&1`, qr/^install ok installed \Q$default\E/,
	"the image has $package installed ($default)");
ok(-f "$rootfs/docker-entrypoint-initdb.d/00-snowflake.sql", 'and its init script in /docker-entrypoint-initdb.d');
note("image: $_") for grep { m{/snowflake} } split /\n/, `chroot '$rootfs' dpkg-query -L $package`;
note("image: /docker-entrypoint-initdb.d/$_") for map { basename($_) } glob "$rootfs/docker-entrypoint-initdb.d/*";
note('config: ' . s/\s+/ /gr) for $image_config =~ /"((?:Entrypoint|Cmd|Volumes|StopSignal|WorkingDir|User)"\s*:\s*(?:\[[^\]]*\]|\{[^}]*\}|"[^"]*"))/g;
note("config: Env $_") for sort map { "$_=$image_env{$_}" } keys %image_env;
like(slurp("$rootfs/usr/share/postgresql/postgresql.conf.sample"), qr/^shared_preload_libraries = 'snowflake'/m,
	'and the sample configuration preloads snowflake');

# --- A container: the image's entrypoint with docker run's (or compose's) options, in
# a root of its own. Returns the pid of unshare, the root and the log.
sub start_container
{
	my (%c) = @_;
	my $rootfs = container_root();
	my $log = dirname($rootfs) . '/log';
	open my $touch, '>', $log or die "$log: $!";
	close $touch;
	my $hostname = $c{hostname} // join '', map { sprintf '%x', int rand 16 } 1 .. 12;
	my $volume = "$tmp/volumes/$c{volume}";
	make_path($volume, "$rootfs$c{target}");
	my @env = ("PATH=$image_env{PATH}", "PGDATA=$image_env{PGDATA}", "PG_MAJOR=$image_env{PG_MAJOR}",
		"LANG=$image_env{LANG}", "HOSTNAME=$hostname", 'HOME=/root', map { "$_=$c{env}{$_}" } sort keys %{ $c{env} });
	my $setup = <<'EOF';
set -e
root=$1 volume=$2 target=$3 hostname=$4; shift 4
mount --bind "$root" "$root"
mount --bind "$volume" "$root$target"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=755 tmpfs "$root/dev"
for device in null zero full random urandom tty; do touch "$root/dev/$device"; mount --bind "/dev/$device" "$root/dev/$device"; done
mkdir "$root/dev/shm" && mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
hostname "$hostname"
ip link set lo up
exec chroot "$root" env -i "$@"
EOF
	my $pid = fork // die "fork: $!";
	if (!$pid)
	{
		open STDOUT, '>', $log or die; open STDERR, '>&', \*STDOUT or die;
		setpgrp;
		exec 'unshare', '--mount', '--pid', '--uts', '--ipc', '--net', '--fork', '--propagation', 'private', '--',
		  'sh', '-c', $setup, 'container', $rootfs, $volume, $c{target}, $hostname, @env, $entrypoint, @{ $c{args} }
		  or die "unshare: $!";
	}
	return { pid => $pid, log => $log, rootfs => $rootfs, hostname => $hostname };
}
# waits until the container's server answers on its socket: after the init's
# temporary server has stopped, if the entrypoint initialised the volume; false if
# the container ends first
sub wait_ready
{
	my ($container) = @_;
	my $socket = "$container->{rootfs}/run/postgresql";
	for (1 .. 480)
	{
		return 0 if waitpid($container->{pid}, WNOHANG) > 0;
		my $log = slurp($container->{log});
		my $serving = $log =~ /PostgreSQL init process complete(.*)/s ? $1 : $log =~ /initdb|database system will be owned/ ? '' : $log;
		return 1 if $serving =~ /ready to accept connections/
		  && system("'$psql' -X -h '$socket' -U postgres -d postgres -Atc 'SELECT 1' >/dev/null 2>&1") == 0;
		sleep 0.25;
	}
	return 0;
}
sub query
{
	my ($container, $db, $sql) = @_;
	my $out = `'$psql' -X -h '$container->{rootfs}/run/postgresql' -U postgres -d '$db' -Atc "$sql" 2>&1`;
	chomp $out;
	return $out;
}
# the host pids of the container's postgres processes (their root is the container's)
sub server_pids
{
	my ($container) = @_;
	my $real = abs_path($container->{rootfs});
	return grep { (readlink("/proc/$_/root") // '') eq $real && proc_read("/proc/$_/comm") =~ /^postgres/ }
	  map { m{/proc/(\d+)$} ? $1 : () } glob '/proc/[0-9]*';
}
sub stop_container
{
	my ($container) = @_;
	my @pids = server_pids($container);
	my %server = map { $_ => 1 } @pids;
	# the postmaster: the server process whose parent is not one
	my ($postmaster) = grep { my ($parent) = proc_read("/proc/$_/status") =~ /^PPid:\s*(\d+)/m; $parent && !$server{$parent} } @pids;
	kill 'INT', $postmaster if $postmaster;  # the image's STOPSIGNAL
	for (1 .. 240) { return 1 if waitpid($container->{pid}, WNOHANG) > 0; sleep 0.25 }
	kill 'KILL', -$container->{pid};
	waitpid $container->{pid}, 0;
	return 0;
}
# docker run's options and the image's arguments (the ones the page uses)
sub parse_run
{
	my @argv = shellwords(@_);
	splice @argv, 0, 2;  # docker run
	my %c = (env => {});
	while (@argv && $argv[0] =~ /^-/)
	{
		my $option = shift @argv;
		if ($option eq '-d') { }
		elsif ($option eq '--name') { $c{name} = shift @argv }
		elsif ($option eq '--hostname') { $c{hostname} = shift @argv }
		elsif ($option eq '-e') { my ($k, $v) = split /=/, shift(@argv), 2; $c{env}{$k} = $v }
		elsif ($option eq '-v') { @c{qw(volume target)} = split /:/, shift(@argv), 2 }
		else { die "docker run option $option: not known to this test" }
	}
	$c{image} = shift @argv;
	$c{args} = [@argv];
	return %c;
}

# --- docker run, as printed (15).
my %run = parse_run($run_15);
is($run{image}, $tag, "docker run runs the image docker build made ($tag)");
my ($worker_id) = "@{ $run{args} }" =~ /snowflake\.worker_id=(\d+)/;

# without POSTGRES_PASSWORD: refused
{
	my %bare = %run;
	$bare{env} = { %{ $run{env} } };
	delete $bare{env}{POSTGRES_PASSWORD};
	$bare{volume} = 'no-password';
	$started = time;
	my $container = start_container(%bare);
	my $ended = 0;
	for (1 .. 120) { if (waitpid($container->{pid}, WNOHANG) > 0) { $ended = 1; last } sleep 0.25 }
	ok($ended && $? != 0 && slurp($container->{log}) =~ /superuser password is not specified/,
		'without POSTGRES_PASSWORD the entrypoint refuses to initialise')
	  or diag(slurp($container->{log}));
	stop_container($container) unless $ended;
	ok(!-e "$tmp/volumes/no-password/PG_VERSION", '... and leaves the volume empty');
	diag(sprintf 'refused start: %.1f s', time - $started);
}

$started = time;
my $container = start_container(%run);
ok(wait_ready($container), "the container starts: $run_15") or diag(slurp($container->{log}));
diag(sprintf 'first start (initdb, init scripts): %.1f s', time - $started);
my $log = slurp($container->{log});
like($log, qr{running /docker-entrypoint-initdb\.d/00-snowflake\.sql}, 'the entrypoint ran the init script');
ok(-f "$tmp/volumes/$run{volume}/PG_VERSION", "the cluster is in the volume ($run{target})");
my @pids = server_pids($container);
# (a backend gone meanwhile, with its status: not counted)
my @uids = map { proc_read("/proc/$_/status") =~ /^Uid:\s+(\d+)/m ? $1 : () } @pids;
ok(@uids && !grep({ $_ != 999 } @uids),
	'every server process runs as the postgres user (999), dropped from root') or diag("pids: @pids; uids: @uids");
is(query($container, 'postgres', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $default,
	"the init script created the extension ($default) in POSTGRES_DB");
is(query($container, 'postgres', "SELECT setting || ' ' || (sourcefile LIKE '%/postgresql.conf') FROM pg_settings WHERE name = 'shared_preload_libraries'"),
	'snowflake true', 'the library is preloaded from postgresql.conf');
my $first = query($container, 'postgres', 'SELECT snowflake_nextval()');
is(query($container, 'postgres', "SELECT worker_id FROM snowflake_decode($first)"), $worker_id,
	"snowflake_nextval() issues under worker id $worker_id ($first)");
is(query($container, 'postgres', "SELECT current_setting('snowflake.host_name')"), 'orders-db', 'snowflake.host_name is the given name');
ok(stop_container($container), 'the container stops on SIGINT (the image\'s STOPSIGNAL)');

# the container recreated: a new root from the image, a new host name, the same volume
$container = start_container(%run);
ok(wait_ready($container), "recreated (host name $container->{hostname}), it starts on the volume")
  or diag(slurp($container->{log}));
unlike(slurp($container->{log}), qr{docker-entrypoint-initdb\.d|initdb}, '... without initialising or running the init script again');
my $after = query($container, 'postgres', 'SELECT snowflake_nextval()');
like($after, qr/^\d+$/, "... and issues ids ($after)") or diag(slurp($container->{log}));
cmp_ok($after =~ /^\d+$/ ? $after : 0, '>', $first, '... greater than before');
stop_container($container);

# --- The compose service, as printed.
SKIP:
{
	skip 'the page has no compose file', 5 unless defined $compose;
	my $parsed = `python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' <<'EOF'\n${compose}EOF\n`;
	require JSON::PP;
	my $file = JSON::PP::decode_json($parsed);
	my ($name) = keys %{ $file->{services} };
	my $service = $file->{services}{$name};
	is($service->{image}, $tag, "the compose service $name runs the image");
	my ($volume, $target) = split /:/, $service->{volumes}[0], 2;
	ok(exists $file->{volumes}{$volume}, "its volume $volume is declared");
	is($target, '/var/lib/postgresql/data', "at 15's PGDATA");
	my $command = ref $service->{command} ? $service->{command} : [ shellwords($service->{command}) ];
	my $container = start_container(env => $service->{environment}, volume => "compose-$volume", target => $target,
		hostname => $service->{hostname}, args => $command);
	ok(wait_ready($container), 'the compose service starts') or diag(slurp($container->{log}));
	my ($compose_worker) = "@$command" =~ /snowflake\.worker_id=(\d+)/;
	is(query($container, 'postgres', 'SELECT worker_id FROM snowflake_decode(snowflake_nextval())'), $compose_worker,
		"and issues under its worker id $compose_worker");
	stop_container($container);
}
done_testing();
