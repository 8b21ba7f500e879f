# The worker id's source switched in the settings' files while the change
# waits for its restart (rule F16 of test/model/fence), and the server copied
# meanwhile by pg_basebackup:
#  1. snowflake.registry -> snowflake.worker_id: the hand-set worker id the
#     files name is recorded as pending, as a reload's is (059_pending.pl),
#     within a second (the lease writer's poll): the copy refuses it, and the
#     registry's grant, beside its source restarted under it (before: the copy
#     took it too, and both issued the same ids);
#  2. snowflake.worker_id -> snowflake.registry: the copy claims a worker id of
#     its own from the registry, beside its source restarted under another.
# Both servers are asked for 300,000 ids each at once (duplicates()).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use SnowflakeTest;

my $registry = registry_server('registry');
my $conninfo = registry_create($registry, 'fleet', '[0,16)', '10 min');
# A short lease and no lead: a copy issuing under its source's worker id
# repeats its ids within the 300,000 each that duplicates() asks for.
my $source = registry_node('source', $conninfo, "snowflake.lease_span = 100\nsnowflake.max_lead = 0\n",
	allows_streaming => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $granted = wait_for_worker($source);
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)');
wait_for_lease($source, $granted);

# The lease's pending worker id once it is $want (undef: none), within 10 s.
sub pending_within
{
	my ($node, $want) = @_;
	my $deadline = time + 10;
	my $pending;
	while (time < $deadline)
	{
		$pending = read_lease($node)->{pending};
		return $pending if ($pending // '') eq ($want // '');
		usleep(50_000);
	}
	return $pending;
}

# 1. From the registry to worker id 51 (outside the registry's worker ids),
# by an edit of the files; a base backup before the restart.
my $log_offset = -s $source->logfile;
$source->append_conf('postgresql.conf', "snowflake.registry = ''\nsnowflake.worker_id = 51\n");
is(pending_within($source, 51), '51', "the files name worker id 51 in place of the registry: the lease records it as pending");
# The lease is written before the log line: wait for the line (its failure dies).
ok($source->wait_for_log(qr/worker id 51 waits for a restart of the server, whose settings name it in place of the registry/,
		$log_offset),
	'the server log says it waits for a restart');
is(read_lease($source)->{worker_id}, $granted, "the registry's grant, $granted, still in effect");
$source->backup('to_hand_set');
$source->restart;
wait_for_lease($source, 51);
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($source, 'to_hand_set');
$copy->start;
copy_refused($copy, 'a base backup taken while a switch from the registry to worker id 51 waited for its restart', 51);
my $fenced = read_lease($copy)->{fenced};
ok((grep { $_ == 51 } @$fenced) && (grep { $_ == $granted } @$fenced),
	"it refuses 51 and the registry's grant (fenced: @$fenced)");
my ($both, $issued) = duplicates($source, $copy);
is($both, 0, "the copy beside its source, restarted under 51: 0 ids issued by both (the copy issued $issued)");
$copy->stop;

# 2. From worker id 51 back to the registry; a base backup before the restart.
$source->append_conf('postgresql.conf', "snowflake.worker_id = -1\nsnowflake.registry = '$conninfo'\n");
is(pending_within($source, undef), undef, 'the files name no worker id: nothing pending');
$source->backup('to_registry');
$source->restart;
my $source_worker = wait_for_worker($source);
my $claimer = PostgreSQL::Test::Cluster->new('claimer');
$claimer->init_from_backup($source, 'to_registry');
$claimer->start;
my $claimer_worker = wait_for_worker($claimer);
isnt($claimer_worker, $source_worker, "the copy under the registry claims a worker id of its own ($claimer_worker, "
	  . "its source $source_worker)");
($both, $issued) = duplicates($source, $claimer);
is($both, 0, "beside its source: 0 ids issued by both (the copy issued $issued)");
$claimer->stop;
$source->stop;
$registry->stop;

done_testing();
