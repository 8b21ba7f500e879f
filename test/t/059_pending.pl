# A worker-id change waiting for its reload (rule F15 of test/model/fence): the
# worker id the settings' files name while another is in effect is recorded
# in the lease, its fence's copy and its WAL record, at once by ALTER SYSTEM
# (before postgresql.auto.conf is written), within a second of a hand edit of
# postgresql.conf (the lease writer's poll). A copy taken before the source's
# reload refuses the worker id the source takes at it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnowflakeTest;

# A short lease and no lead: a copy's ids start at most 100 ms ahead of its
# clock, so that a copy issuing under its source's worker id repeats its ids
# within the 300,000 each that duplicates() asks for.
my $source = snowflake_node('source', 51, "snowflake.lease_span = 100\nsnowflake.max_lead = 0\n",
	allows_streaming => 1, has_archiving => 1);
$source->start;
$source->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(1000)');
wait_for_lease($source, 51);
is(read_lease($source)->{pending}, undef, 'nothing pending: no pending line');
$source->backup('settled');    # for 4., before any change

# 1. A hand edit of postgresql.conf (configuration management), not reloaded:
# recorded at the lease writer's poll; a base backup then, the source
# reloaded after.
$source->append_conf('postgresql.conf', "snowflake.worker_id = 52\n");
wait_for_lease_line($source, 'pending 52');
is(read_lease($source)->{worker_id}, '51', 'the hand edit: 51 still in effect');
is(slurp_file($source->data_dir . '/pg_snowflake/fence') =~ /\npending 52\n/ ? 1 : 0, 1,
	'the fence\'s copy records the pending worker id too');
ok($source->log_contains(qr/worker id 52 waits for a reload of the settings, which name it/),
	'the server log says a change waits for its reload');
$source->backup('hand_edit');
reload_and_wait($source);
wait_for_lease($source, 52);
is(read_lease($source)->{pending}, undef, 'reloaded: 52 in effect, nothing pending');
my $hand = PostgreSQL::Test::Cluster->new('hand');
$hand->init_from_backup($source, 'hand_edit');
$hand->start;
copy_refused($hand, 'a base backup taken while a hand edit waited for its reload', 52);
is_deeply(read_lease($hand)->{fenced}, [ 51, 52 ], 'it refuses the worker id then in effect and the pending one');
is(duplicates($source, $hand), 0, 'the copy beside its source, which reloaded to 52: 0 ids issued by both');
$hand->stop;

# 2. ALTER SYSTEM: recorded before it returns (before postgresql.auto.conf is
# written), the source reloaded after a base backup.
$source->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 53');
is(read_lease($source)->{pending}, '53', 'ALTER SYSTEM: the lease records 53 as pending when it returns');
$source->backup('alter_system');
reload_and_wait($source);
wait_for_lease($source, 53);
my $altered = PostgreSQL::Test::Cluster->new('altered');
$altered->init_from_backup($source, 'alter_system');
$altered->start;
copy_refused($altered, 'a base backup taken while an ALTER SYSTEM waited for its reload', 53);
is(duplicates($source, $altered), 0, 'the copy beside its source, which reloaded to 53: 0 ids issued by both');
$altered->stop;

# 3. RESET (the files then name postgresql.conf's 52), then SET back to the
# one in effect: nothing pending, at once.
$source->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.worker_id');
is(read_lease($source)->{pending}, '52', 'ALTER SYSTEM RESET: postgresql.conf\'s worker id recorded as pending');
$source->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 53');
is(read_lease($source)->{pending}, undef, 'set back to the one in effect: nothing pending');
$source->safe_psql('postgres', 'ALTER SYSTEM RESET ALL');
is(read_lease($source)->{pending}, '52', 'ALTER SYSTEM RESET ALL: likewise');
my ($ret, $stdout, $stderr) = $source->psql('postgres', "ALTER SYSTEM SET snowflake.worker_id = 'x'");
isnt($ret, 0, 'an ALTER SYSTEM the setting refuses fails as before');
is(read_lease($source)->{pending}, '52', 'and the pending worker id is unchanged');
$source->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 53');
$source->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
($ret, $stdout, $stderr) = $source->psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 57',
	extra_params => [ '-U', 'plain' ]);
like($stderr, qr/permission denied to set parameter "snowflake.worker_id"/, 'a role that may not change it is refused');
is(read_lease($source)->{pending}, undef, 'and records nothing');

# 4. The WAL record carries it: a restore of a backup taken before the
# change (its settings name 51 then) replays the source's records, the
# pending one among them, and refuses it too.
$source->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 54');
is(read_lease($source)->{pending}, '54', '54 pending');
my $walfile = $source->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$source->poll_query_until('postgres', "SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($source, 'settled', has_restoring => 1, standby => 0);
$restored->start;
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery did not end';
my $fenced = read_lease($restored)->{fenced};
ok((grep { $_ == 54 } @$fenced) && (grep { $_ == 51 } @$fenced),
	"a restore replaying the pending record refuses 54 as well as 51 (fenced: @$fenced)");
$restored->stop;

# 5. The source keeps its pending worker id across nothing: restarted, the
# files' worker id is in effect and nothing is pending.
$source->restart;
wait_for_lease($source, 54);
is(read_lease($source)->{pending}, undef, 'restarted: 54 in effect, nothing pending');

# 6. A standby replays the pending worker id into its own lease, and keeps it
# through every later record, its lease extensions too: a copy of the
# standby refuses it, and does not take 55 beside its primary.
$source->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.worker_id = 55');
$source->backup('for_standby');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($source, 'for_standby', has_streaming => 1);
$standby->start;
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(100000)');    # lease records
$source->wait_for_catchup($standby);
is(read_lease($standby)->{pending}, '55', 'the standby\'s lease records its primary\'s pending worker id');
$source->safe_psql('postgres', 'CHECKPOINT');
$source->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextvals(100000)');
$source->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');    # a restartpoint: a copy replays from here
is(read_lease($standby)->{pending}, '55', 'and keeps it through later records and a restartpoint');
$standby->backup('of_standby');
my $of_standby = PostgreSQL::Test::Cluster->new('of_standby');
$of_standby->init_from_backup($standby, 'of_standby');
# started as a primary: neither the standby's signal file nor its primary
unlink($of_standby->data_dir . '/standby.signal') or die "standby.signal: $!";
$of_standby->append_conf('postgresql.conf', "primary_conninfo = ''\n");
$of_standby->start;
$of_standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery did not end';
reload_and_wait($source);
wait_for_lease($source, 55);
copy_refused($of_standby, 'a copy of the standby, its primary\'s change pending', 55);
is(duplicates($source, $of_standby), 0, 'beside the primary, which reloaded to 55: 0 ids issued by both');
$of_standby->stop;
$standby->stop;

# 7. The last line naming the setting is the one a reload takes, whatever an
# earlier one says: an earlier line that is not a number does not hide the
# change.
$source->append_conf('postgresql.conf', "snowflake.worker_id = ''\nsnowflake.worker_id = 56\n");
$source->safe_psql('postgres', 'ALTER SYSTEM RESET snowflake.worker_id');
is(read_lease($source)->{pending}, '56', 'an earlier line that is no number: the last line\'s 56 recorded as pending');
reload_and_wait($source);
wait_for_lease($source, 56);
is(read_lease($source)->{pending}, undef, 'reloaded: 56 in effect, as recorded');
$source->stop;

done_testing();
