# Failover under a real HA manager: Patroni with etcd, three
# PostgreSQL nodes on loopback sharing one snowflake.worker_id (a replica is
# its primary's standby; promoted, it continues its ids). Two clients insert
# rows and log each id the server acknowledged (committed); the leader is
# killed (kill -9 of its Patroni and its postmaster); Patroni promotes a
# replica; the clients reconnect to the new leader (target_session_attrs);
# the old leader's Patroni, started again, rejoins it as a replica through
# pg_rewind. With synchronous_mode: 0 acknowledged rows lost, 0 duplicate
# ids, 0 ids of the new leader at or below an id the old one acknowledged.
# The same with asynchronous replication is measured and printed.
use strict;
use warnings FATAL => 'all';

use HTTP::Tiny;
use IPC::Run ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $bindir = `pg_config --bindir`;
chomp $bindir;
for my $program (qw(patroni etcd))
{
	plan skip_all => "$program is not installed (Debian packages patroni, etcd-server)"
	  unless grep { -x "$_/$program" } split /:/, $ENV{PATH};
}
# bookworm's Patroni (3.0.2) predates PostgreSQL 16: the other legs run a newer
# one (test/pg-tools puts trixie's first in PATH)
my ($patroni_version) = `patroni --version` =~ /(\d+)\./;
plan skip_all => "this Patroni ($patroni_version.x) predates PostgreSQL $ENV{PG_MAJOR}: test/pg-tools provides a newer one"
  if ($ENV{PG_MAJOR} // '15') ne '15' && $patroni_version < 4;

my $tmp = PostgreSQL::Test::Utils::tempdir_short;
my $http = HTTP::Tiny->new(timeout => 2);

# Nothing started here outlives the test, also when it dies half-way: the
# clients, Patroni (TERM: it stops its PostgreSQL) and etcd, newest first,
# then any postmaster left behind (its Patroni killed with -9).
my @started;
END
{
	local $?;    # the test's exit status is Test::More's, not a killed child's
	for my $harness (reverse @started)
	{
		eval { $harness->kill_kill(grace => 15) };    # (croaks when it has ended)
	}
	for my $pidfile (defined $tmp ? glob("$tmp/*/data/postmaster.pid") : ())    # (undefined when skipped)
	{
		my ($pid) = split /\n/, (eval { slurp_file($pidfile) } // '');
		kill 'KILL', $pid if defined $pid && $pid =~ /^\d+$/;
	}
}
sub started { push @started, $_[0]; return $_[0]; }

# etcd, one member, on loopback (Patroni's etcd: section speaks the v2 API).
my ($etcd_client, $etcd_peer) = map { PostgreSQL::Test::Cluster::get_free_port() } 1 .. 2;
my $etcd = started(IPC::Run::start(
	[ 'etcd', '--name', 'e1', '--data-dir', "$tmp/etcd", '--enable-v2=true',
		'--listen-client-urls', "http://127.0.0.1:$etcd_client",
		'--advertise-client-urls', "http://127.0.0.1:$etcd_client",
		'--listen-peer-urls', "http://127.0.0.1:$etcd_peer",
		'--initial-advertise-peer-urls', "http://127.0.0.1:$etcd_peer",
		'--initial-cluster', "e1=http://127.0.0.1:$etcd_peer" ],
	'>', "$tmp/etcd.log", '2>&1'));
wait_until(sub { ($http->get("http://127.0.0.1:$etcd_client/health")->{content} // '') =~ /true/ }, 'etcd is up');

# One Patroni cluster of three nodes; returns them as hashes.
sub patroni_cluster
{
	my ($scope, $synchronous) = @_;
	my @nodes;
	for my $n (1 .. 3)
	{
		my %node = (name => "$scope$n", pg => PostgreSQL::Test::Cluster::get_free_port(),
			api => PostgreSQL::Test::Cluster::get_free_port(), dir => "$tmp/$scope$n");
		mkdir $node{dir};
		my $sync = $synchronous ? 'true' : 'false';
		append_to_file("$node{dir}/patroni.yml", <<"EOF");
scope: $scope
name: $node{name}
log:
  dir: $node{dir}
restapi:
  listen: 127.0.0.1:$node{api}
  connect_address: 127.0.0.1:$node{api}
etcd:
  host: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      parameters:
        shared_preload_libraries: snowflake
        snowflake.worker_id: 21
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        hot_standby: 'on'
  initdb:
    - auth: trust
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$node{pg}
  connect_address: 127.0.0.1:$node{pg}
  data_dir: $node{dir}/data
  bin_dir: $bindir
  pgpass: $node{dir}/pgpass
  parameters:
    unix_socket_directories: '$node{dir}'
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
EOF
		$node{run} = start_patroni(\%node);
		push @nodes, \%node;
		# the first node bootstraps the cluster before the others clone it
		wait_until(sub { role(\%node) eq 'primary' }, "$node{name} leads") if $n == 1;
	}
	wait_until(sub { (grep { role($_) eq 'replica' } @nodes) == 2 }, "$scope: two replicas stream");
	return @nodes;
}

sub start_patroni
{
	my ($node) = @_;
	return started(IPC::Run::start([ 'patroni', "$node->{dir}/patroni.yml" ], '>>', "$node->{dir}/patroni.out", '2>&1'));
}

# 'primary', 'replica' or '' (down), from Patroni's REST API.
sub role
{
	my ($node) = @_;
	my $response = $http->get("http://127.0.0.1:$node->{api}/patroni");
	return '' unless $response->{success};
	return $response->{content} =~ /"role": ?"(master|primary)"/ ? 'primary'
	  : $response->{content} =~ /"role": ?"replica"/ && $response->{content} =~ /"state": ?"running"/ ? 'replica'
	  : '';
}

# Whether Patroni's REST API names this node a synchronous standby.
sub sync_standby
{
	my ($node) = @_;
	my $response = $http->get("http://127.0.0.1:$node->{api}/patroni");
	return $response->{success} && $response->{content} =~ /"sync_standby": ?true/;
}

sub wait_until
{
	my ($condition, $what) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	until ($condition->())
	{
		die "timed out: $what" if time > $deadline;
		usleep(100_000);
	}
	return 1;
}

sub psql_at
{
	my ($node, $sql) = @_;
	my ($out, $err);
	IPC::Run::run([ 'psql', '-X', '-At', '-h', '127.0.0.1', '-p', $node->{pg}, '-U', 'postgres', '-d', 'postgres', '-c', $sql ],
		'>', \$out, '2>', \$err, IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default))
	  or die "psql on $node->{name}: $err";
	chomp $out;
	return $out;
}

# A client: inserts rows one by one through a connection string that names all
# three nodes and wants the writable one; logs each id the server returned.
sub start_client
{
	my ($nodes, $log) = @_;
	my $hosts = join ',', map { '127.0.0.1' } @$nodes;
	my $ports = join ',', map { $_->{pg} } @$nodes;
	my $conninfo = "host=$hosts port=$ports user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=2";
	my $script = qq{while [ ! -e "$log.stop" ]; do psql -X -At -d "$conninfo" -c "INSERT INTO t DEFAULT VALUES RETURNING id" >>"$log" 2>/dev/null || sleep 0.05; done};
	return started(IPC::Run::start([ 'bash', '-c', $script ]));
}

sub lines { return -e $_[0] ? grep { /^\d+$/ } split /\n/, slurp_file($_[0]) : (); }
# how many (0 before the client has written its log)
sub count_lines { my @ids = lines($_[0]); return scalar @ids; }

# Stops a cluster: TERM to each Patroni, which stops its PostgreSQL (fast).
# Each must be gone within 60 s; one that is not fails the test, with the end
# of its Patroni's and PostgreSQL's output, and is killed.
sub stop_patroni
{
	my ($scope, @nodes) = @_;
	$_->{run}->signal('TERM') for @nodes;
	for my $node (@nodes)
	{
		my $stopped = eval {
			local $SIG{ALRM} = sub { die "alarm\n" };
			alarm 60;
			$node->{run}->finish;
			alarm 0;
			1;
		};
		alarm 0;
		next if ok($stopped, "$scope: $node->{name}'s Patroni and PostgreSQL stop within 60 s");
		for my $file (glob("$node->{dir}/patroni.out $node->{dir}/patroni.log $node->{dir}/data/log/*"))
		{
			my @lines = split /\n/, slurp_file($file);
			diag("$file, its end:\n" . join("\n", @lines[ ($#lines > 40 ? $#lines - 40 : 0) .. $#lines ]));
		}
		eval { $node->{run}->kill_kill(grace => 5) };
	}
}

# One failover run; returns (acknowledged rows lost, duplicates, new ids at or
# below an acknowledged old one).
sub failover
{
	my ($scope, $synchronous) = @_;
	my @nodes = patroni_cluster($scope, $synchronous);
	my ($leader) = grep { role($_) eq 'primary' } @nodes;
	psql_at($leader, 'CREATE EXTENSION snowflake; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval())');
	my @logs = map { "$tmp/$scope-client$_.log" } 1 .. 2;
	my @clients = map { start_client(\@nodes, $_) } @logs;
	wait_until(sub { count_lines($logs[0]) >= 200 && count_lines($logs[1]) >= 200 }, "$scope: the clients insert");
	# in synchronous mode Patroni promotes only the standby its /sync key names:
	# killed before it names one, the leader has no successor
	wait_until(sub { grep { $_ != $leader && sync_standby($_) } @nodes }, "$scope: Patroni names a synchronous standby")
	  if $synchronous;

	# kill -9 of the leader: its Patroni, then its postmaster
	my $pid = (split /\n/, slurp_file("$leader->{dir}/data/postmaster.pid"))[0];
	$leader->{run}->signal('KILL');
	kill 'KILL', $pid;
	my @before = map { [ lines($_) ] } @logs;    # acknowledged by the old leader
	my $killed = time;
	my $new;
	wait_until(sub { ($new) = grep { $_ != $leader && role($_) eq 'primary' } @nodes; $new }, "$scope: a new leader");
	my $promoted = time - $killed;
	my @counts = map { scalar @$_ } @before;
	wait_until(sub { count_lines($logs[0]) >= $counts[0] + 100 && count_lines($logs[1]) >= $counts[1] + 100 },
		"$scope: the clients insert on the new leader");
	append_to_file("$_.stop", '') for @logs;
	$_->finish for @clients;

	my @old = map { @$_ } @before;
	my @all = map { lines($_) } @logs;
	my %acked = map { $_ => 1 } @all;
	my %old = map { $_ => 1 } @old;
	my @new = grep { !$old{$_} } @all;
	my $max_old = (sort { $a <=> $b } @old)[-1];
	my %on_new = map { $_ => 1 } split /\n/, psql_at($new, 'SELECT id FROM t');
	my $lost = grep { !$on_new{$_} } @all;
	my $duplicates = @all - keys %acked;
	my $at_or_below = grep { $_ <= $max_old } @new;

	# The old leader's Patroni again: it rejoins as a replica (pg_rewind).
	$leader->{run} = start_patroni($leader);
	wait_until(sub { role($leader) eq 'replica' }, "$scope: the old leader rejoins as a replica");
	# Patroni may restart it once more after the rewind: asked until it answers
	my ($stdout, $stderr);
	wait_until(
		sub {
			IPC::Run::run([ 'psql', '-X', '-At', '-h', '127.0.0.1', '-p', $leader->{pg}, '-U', 'postgres', '-d', 'postgres',
					'-c', 'SELECT snowflake_nextval()' ], '>', \$stdout, '2>', \$stderr,
				IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
			$stdout ne '' || $stderr =~ /ERROR/;
		},
		"$scope: the rejoined old leader answers");
	is($stdout, '', "$scope: the rejoined old leader issues no id");
	like($stderr, qr/cannot be generated on a hot standby/, "$scope: the rejoined old leader does not generate");

	note(sprintf('%-6s promoted in %.1f s; acknowledged %d by the old leader, %d by the new; lost %d, duplicates %d, '
		  . 'new ids at or below the last acknowledged old id %d', $scope, $promoted, scalar @old, scalar @new,
		$lost, $duplicates, $at_or_below));
	stop_patroni($scope, @nodes);
	return ($lost, $duplicates, $at_or_below, scalar @old, scalar @new);
}

my ($lost, $duplicates, $at_or_below, $old, $new) = failover('sync', 1);
cmp_ok($old, '>', 0, "synchronous_mode: the old leader acknowledged $old ids");
cmp_ok($new, '>', 0, "synchronous_mode: the new leader acknowledged $new ids");
is($lost, 0, 'synchronous_mode: 0 acknowledged rows lost');
is($duplicates, 0, 'synchronous_mode: 0 duplicate ids');
is($at_or_below, 0, 'synchronous_mode: 0 ids of the new leader at or below an acknowledged id of the old one');

($lost, $duplicates, $at_or_below, $old, $new) = failover('async', 0);
is($duplicates, 0, 'asynchronous: 0 duplicate ids among the acknowledged ones');
note("asynchronous (measured): $lost acknowledged rows lost, $at_or_below new ids at or below an acknowledged old one");

$etcd->signal('TERM');
$etcd->finish;
done_testing();
